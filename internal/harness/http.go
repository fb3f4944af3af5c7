package harness

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"
)

// DefaultMaxAnswerBytes caps an agent's answer (HTTP body, command stdout
// or recorded file) at 32 MiB.
const DefaultMaxAnswerBytes = 32 << 20

// HTTPRunner reaches an agent over HTTP: each task is POSTed as a Request
// (Content-Type application/json) to URL, and a 2xx response body is the
// agent's answer. It is safe for concurrent use.
//
// Transport errors (connection refused, reset or closed early), 429 and
// 5xx answers are transient; other non-2xx answers are final errors that
// quote the start of the body.
type HTTPRunner struct {
	// URL is the agent's endpoint (http or https).
	URL string
	// Client sends the requests; nil means a client made by NewHTTPRunner.
	// Timeouts come from the per-attempt context, so the client needs none.
	Client *http.Client
	// MaxAnswerBytes caps the response body; 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int64
	// ErrorExcerpt, when set, turns what an error answer says (the detail
	// of a problem document, else the body's first line) into the text its
	// error quotes; nil quotes up to 200 bytes of it as is. Server-side
	// runs shorten and redact it (an agent may echo credentials).
	ErrorExcerpt func(text string) string
}

// NewHTTPRunner returns an HTTPRunner for rawURL with a client that keeps
// up to maxConns idle connections to the agent (set it to the run's
// concurrency, so parallel tasks reuse connections instead of opening new
// ones). It fails when rawURL is not an absolute http or https URL.
func NewHTTPRunner(rawURL string, maxConns int) (*HTTPRunner, error) {
	if err := checkHTTPURL(rawURL); err != nil {
		return nil, fmt.Errorf("agent url: %w", err)
	}
	return &HTTPRunner{URL: rawURL, Client: newHTTPClient(maxConns)}, nil
}

// checkHTTPURL accepts only absolute http and https URLs with a host.
func checkHTTPURL(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return err
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http:// or https:// URL", rawURL)
	}
	return nil
}

// newHTTPClient returns a client whose transport keeps maxConns idle
// connections per host (the default of 2 would make a run at concurrency
// 16 open and close connections all the time).
func newHTTPClient(maxConns int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if maxConns < 2 {
		maxConns = 2
	}
	t.MaxIdleConnsPerHost = maxConns
	t.MaxIdleConns = max(t.MaxIdleConns, maxConns)
	return &http.Client{Transport: t}
}

// Run POSTs req to the agent and returns the response body.
func (r *HTTPRunner) Run(ctx context.Context, req *Request) ([]byte, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	client := r.Client
	if client == nil {
		client = http.DefaultClient
	}
	return postJSON(ctx, client, r.URL, body, nil, limitOr(r.MaxAnswerBytes), "agent", r.ErrorExcerpt)
}

func limitOr(n int64) int64 {
	if n <= 0 {
		return DefaultMaxAnswerBytes
	}
	return n
}

// postJSON POSTs body to u and returns the 2xx response body, at most
// limit bytes. who ("agent", "service") starts error messages; excerpt
// (nil: at most 200 bytes) shortens what an error answer says. Transport
// failures, 429 and 5xx are Transient.
func postJSON(ctx context.Context, client *http.Client, u string, body []byte, header http.Header, limit int64, who string,
	excerpt func(string) string) ([]byte, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	for k, vs := range header {
		hreq.Header[k] = vs
	}
	resp, err := client.Do(hreq)
	if err != nil {
		return nil, Transient(fmt.Errorf("%s unreachable: %w", who, unwrapURLError(err)))
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, Transient(fmt.Errorf("%s answer cut short: %w", who, err))
	}
	switch {
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return nil, Transient(fmt.Errorf("%s answered %s%s", who, resp.Status, quoteBody(data, excerpt)))
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		return nil, fmt.Errorf("%s answered %s%s", who, resp.Status, quoteBody(data, excerpt))
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s answer larger than %d bytes", who, limit)
	}
	return data, nil
}

// unwrapURLError drops the *url.Error wrapper, whose message repeats the
// method and URL (which may carry credentials in its query).
func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

// quoteBody returns ": " and what body says: the detail (else the title)
// of an RFC 9457 problem document, else the first line of body, passed
// through excerpt, or when excerpt is nil cut to 200 bytes; "" for an
// empty body.
func quoteBody(body []byte, excerpt func(string) string) string {
	var problem struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
	}
	if json.Unmarshal(body, &problem) == nil && (problem.Detail != "" || problem.Title != "") {
		if problem.Detail != "" {
			body = []byte(problem.Detail)
		} else {
			body = []byte(problem.Title)
		}
	}
	s := strings.TrimSpace(string(body))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if excerpt != nil && s != "" {
		s = excerpt(s)
	} else if len(s) > 200 {
		s = s[:200]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "..."
	}
	if s == "" {
		return ""
	}
	return ": " + s
}
