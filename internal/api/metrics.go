package api

import (
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the service's Prometheus metrics (STYLE.md section 7),
// registered on the injected registerer.
type metrics struct {
	httpRequests     *prometheus.CounterVec
	httpDuration     *prometheus.HistogramVec
	evalDuration     prometheus.Histogram
	combinations     prometheus.Histogram
	evaluations      *prometheus.CounterVec
	evalErrors       *prometheus.CounterVec
	poolRejected     prometheus.Counter
	poolWorkers      prometheus.Gauge
	poolCapacity     prometheus.Gauge
	idempotentReplay prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, version string, pool *Pool, inflight chan struct{}, cache *byteCache) *metrics {
	m := &metrics{
		httpRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		httpDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "toolscore_http_request_duration_seconds",
			Help:    "HTTP request duration in seconds, by route pattern, method and status code.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route", "method", "code"}),
		evalDuration: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_evaluation_duration_seconds",
			Help:    "Time to grade one trace (contract and trace decoding, evaluation, encoding), in seconds.",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1, 5},
		}),
		combinations: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "toolscore_contract_combinations",
			Help:    "Alternatives combinations scored per evaluation.",
			Buckets: prometheus.ExponentialBuckets(1, 2, 9), // 1 .. 256
		}),
		evaluations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_evaluations_total",
			Help: "Completed evaluations by grade (A-F) and verdict (pass, fail).",
		}, []string{"grade", "verdict"}),
		evalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "toolscore_evaluation_errors_total",
			Help: "Evaluations that produced no result, by problem type slug.",
		}, []string{"type"}),
		poolRejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolscore_pool_rejected_total",
			Help: "Evaluations refused with 429 because the queue was full.",
		}),
		poolWorkers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolscore_pool_workers",
			Help: "Evaluation workers in the pool.",
		}),
		poolCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "toolscore_pool_queue_capacity",
			Help: "Capacity of the evaluation queue.",
		}),
		idempotentReplay: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "toolscore_idempotent_replays_total",
			Help: "Requests answered from a stored Idempotency-Key.",
		}),
	}
	queue := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_pool_queue_length",
		Help: "Evaluations waiting in the queue.",
	}, func() float64 { return float64(pool.QueueLength()) })
	busy := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_pool_busy_workers",
		Help: "Workers currently running an evaluation.",
	}, func() float64 { return float64(pool.Busy()) })
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_evaluations_in_flight",
		Help: "Single evaluations being decoded, evaluated or stored.",
	}, func() float64 { return float64(len(inflight)) })
	cacheBytes := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_contract_cache_bytes",
		Help: "Cost of the parsed contracts cached (bytes their parsing allocated, plus their raw size per combination).",
	}, func() float64 { b, _ := cache.size(); return float64(b) })
	cacheEntries := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "toolscore_contract_cache_entries",
		Help: "Parsed contracts cached, inline and registry.",
	}, func() float64 { _, n := cache.size(); return float64(n) })
	build := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "toolscore_build_info",
		Help: "Build metadata; the value is always 1.",
	}, []string{"version", "goversion"})
	build.WithLabelValues(version, runtime.Version()).Set(1)
	m.poolWorkers.Set(float64(pool.workers))
	m.poolCapacity.Set(float64(pool.QueueCapacity()))
	reg.MustRegister(m.httpRequests, m.httpDuration, m.evalDuration, m.combinations, m.evaluations, m.evalErrors,
		m.poolRejected, m.poolWorkers, m.poolCapacity, m.idempotentReplay, queue, busy, inFlight, cacheBytes, cacheEntries, build)
	return m
}
