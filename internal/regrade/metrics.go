package regrade

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the regrade metrics (STYLE.md section 7), registered on the
// injected registerer.
type metrics struct {
	// results counts originals by outcome: regraded (a new result was
	// written), failed (the stored row could not be regraded), skipped (a
	// chunk that ran before had already written it).
	results *prometheus.CounterVec
	// flips counts verdict flips by direction (pass_to_fail, fail_to_pass).
	flips *prometheus.CounterVec
	// chunkDuration is the duration of one chunk job.
	chunkDuration prometheus.Histogram
	// jobs counts regrade jobs by kind (plan, chunk) and outcome
	// (completed, retried, cancelled).
	jobs *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, active func(context.Context) (int64, error)) *metrics {
	m := &metrics{
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_regrade_results_total",
			Help: "Original results handled by regrade chunks, by outcome (regraded, failed, skipped).",
		}, []string{"outcome"}),
		flips: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_regrade_flips_total",
			Help: "Verdict flips found by regrades, by direction (pass_to_fail, fail_to_pass).",
		}, []string{"direction"}),
		chunkDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_regrade_chunk_duration_seconds",
			Help:    "Duration of one regrade chunk job (read, evaluate, write), in seconds.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_regrade_jobs_total",
			Help: "Regrade jobs run by this process, by kind (plan, chunk) and outcome (completed, retried, cancelled).",
		}, []string{"kind", "outcome"}),
	}
	for _, o := range []string{"regraded", "failed", "skipped"} {
		m.results.WithLabelValues(o)
	}
	for _, d := range []string{"pass_to_fail", "fail_to_pass"} {
		m.flips.WithLabelValues(d)
	}
	activeGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_regrades_active",
		Help: "Regrades pending or running in the database (the same on every replica; aggregate with max, not sum); -1 when the database cannot be read.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := active(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	})
	if reg != nil {
		reg.MustRegister(m.results, m.flips, m.chunkDuration, m.jobs, activeGauge)
	}
	return m
}
