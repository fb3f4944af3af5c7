package api

import (
	"context"
	"net/http"
	"slices"

	"github.com/toolscore/toolscore/internal/engine"
	"github.com/toolscore/toolscore/internal/engine/secretscan"
	"github.com/toolscore/toolscore/internal/record"
)

// This file redacts what the service stores and shows beside results:
// the caller's task_id, run_id, agent and labels (docs/security.md "What
// is redacted where"). The engine redacts the result itself.

// redactTexts replaces, in place, every secret scanner finds in the
// strings ptrs point to with its marker "[REDACTED:<rule>]", in one scan
// that also sees the texts extra (a secret found in one of those is
// replaced in the others too). A nil scanner, or nothing but empty
// strings, redacts nothing. The same texts always redact alike.
//
// Errors: the scan is incomplete (ctx ended); the fields hold what was
// found replaced.
func redactTexts(ctx context.Context, scanner engine.SecretScanner, ptrs []*string, extra []string) error {
	if scanner == nil {
		return nil
	}
	texts := make([]string, 0, len(ptrs)+len(extra))
	empty := len(extra) == 0
	for _, p := range ptrs {
		texts = append(texts, *p)
		empty = empty && *p == ""
	}
	if empty {
		return nil
	}
	out, err := secretscan.Redact(ctx, scanner, append(texts, extra...))
	for i, p := range ptrs {
		*p = out[i]
	}
	return err
}

// redactFields redacts *taskID, *runID, *agent and labels (keys and
// values) with redactTexts; each label is scanned also as "key=value", so
// that an assignment rule sees its key ({"api_key": "..."}). It returns
// labels redacted: a new map when something changed, in which two keys
// that redact alike keep the value of the greater original key.
func redactFields(ctx context.Context, scanner engine.SecretScanner, taskID, runID, agent *string, labels map[string]string) (map[string]string, error) {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	ptrs := []*string{taskID, runID, agent}
	extra := make([]string, 0, len(keys))
	kv := make([]string, 2*len(keys))
	for i, k := range keys {
		kv[2*i], kv[2*i+1] = k, labels[k]
		ptrs = append(ptrs, &kv[2*i], &kv[2*i+1])
		extra = append(extra, k+"="+labels[k])
	}
	err := redactTexts(ctx, scanner, ptrs, extra)
	changed := false
	for i, k := range keys {
		changed = changed || kv[2*i] != k || kv[2*i+1] != labels[k]
	}
	if !changed {
		return labels, err
	}
	red := make(map[string]string, len(keys))
	for i := range keys {
		red[kv[2*i]] = kv[2*i+1]
	}
	return red, err
}

// redactFilter redacts the task_id, run_id, agent and label filters of a
// result filter or regrade selection as redactFields redacts what is
// stored, so that they select it; *labels is replaced by a redacted copy.
func redactFilter(ctx context.Context, scanner engine.SecretScanner, taskID, runID, agent *string, labels *[]record.LabelFilter) error {
	ls := slices.Clone(*labels)
	*labels = ls
	ptrs := []*string{taskID, runID, agent}
	var extra []string
	for i := range ls {
		l := &ls[i]
		ptrs = append(ptrs, &l.Key, &l.Value)
		if l.HasValue {
			extra = append(extra, l.Key+"="+l.Value)
		}
	}
	return redactTexts(ctx, scanner, ptrs, extra)
}

// filter is parseFilter with its identifier filters redacted
// (redactFilter), as the results they select were stored.
func (s *Server) filter(r *http.Request) (record.ResultFilter, error) {
	f, err := parseFilter(r)
	if err != nil {
		return f, err
	}
	return f, redactFilter(r.Context(), s.cfg.SecretScanner, &f.TaskID, &f.RunID, &f.Agent, &f.Labels)
}
