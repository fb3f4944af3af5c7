package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/toolscore/toolscore/internal/record"
)

func (s *Server) statsRoutes(r chi.Router) {
	r.Get("/stats", s.handle(s.getStats))
}

// statsGroupView is one group of GET /v1/stats.
type statsGroupView struct {
	Key       string           `json:"key"`
	Count     int64            `json:"count"`
	Passed    int64            `json:"passed"`
	PassRate  float64          `json:"pass_rate"`
	MeanScore float64          `json:"mean_score"`
	Grades    map[string]int64 `json:"grades"`
}

// statsView is the answer of GET /v1/stats.
type statsView struct {
	GroupBy string           `json:"group_by"`
	Groups  []statsGroupView `json:"groups"`
}

// getStats aggregates stored results for dashboards: counts, pass rate,
// mean score and grade mix per contract version, agent, task or day, with
// the filters of GET /v1/evaluations.
func (s *Server) getStats(w http.ResponseWriter, r *http.Request) error {
	f, err := s.filter(r)
	if err != nil {
		return err
	}
	g := record.StatsGroupBy(r.URL.Query().Get("group_by"))
	switch g {
	case "":
		g = record.GroupByContractVersion
	case record.GroupByContractVersion, record.GroupByAgent, record.GroupByTask, record.GroupByDay:
	default:
		return paramError("group_by", "must be contract_version, agent, task or day, got %q", g)
	}
	groups, err := s.store.Stats(r.Context(), ProjectFrom(r.Context()), f, g)
	if err != nil {
		return err
	}
	out := statsView{GroupBy: string(g), Groups: []statsGroupView{}}
	for _, sg := range groups {
		v := statsGroupView{Key: sg.Key, Count: sg.Count, Passed: sg.Passed, MeanScore: sg.MeanScore, Grades: sg.Grades}
		if sg.Count > 0 {
			v.PassRate = float64(sg.Passed) / float64(sg.Count)
		}
		out.Groups = append(out.Groups, v)
	}
	writeJSON(w, mediaJSON, http.StatusOK, out)
	return nil
}
