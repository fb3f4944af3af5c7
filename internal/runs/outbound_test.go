package runs

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/toolscore/toolscore/internal/harness"
)

func mustAllow(t *testing.T, entries ...string) AllowList {
	t.Helper()
	a, err := ParseAllowList(entries)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestParseAllowList(t *testing.T) {
	for _, bad := range []string{"http://agent.example.com", "agent.example.com:8080", "*", "a..b", "10.0.0.0/33"} {
		if _, err := ParseAllowList([]string{bad}); err == nil {
			t.Errorf("ParseAllowList(%q) = nil error", bad)
		}
	}
	if a := mustAllow(t, " ", ""); !a.Empty() {
		t.Error("blank entries make a non-empty list")
	}
}

func TestCheckURL(t *testing.T) {
	a := mustAllow(t, "agent.example.com", "*.agents.example.net", "10.1.2.3", "192.168.7.0/24", "169.254.169.254")
	tests := []struct {
		url  string
		want string // "" for allowed
	}{
		{"https://agent.example.com/run", ""},
		{"https://AGENT.example.com./run", ""},
		{"http://a.agents.example.net:8080/", ""},
		{"http://agents.example.net/", "host agents.example.net is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)"},
		{"http://other.example.com/", "host other.example.com is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)"},
		{"http://10.1.2.3/", ""},
		{"http://10.1.2.4/", "host 10.1.2.4 is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)"},
		{"http://192.168.7.99/", ""},
		{"http://[::ffff:10.1.2.3]/", ""},
		{"http://169.254.169.254/latest/meta-data/", ""}, // listed explicitly, so allowed
		{"http://user:s3cret@agent.example.com/", "the URL holds a password, which the stored run would keep; reach the agent without one"},
		// User info and credential-named query parameters would be stored
		// with the run in clear (the scanner does not recognise them all).
		{"http://user@agent.example.com/", "the URL holds user info (often a token), which the stored run would keep; reach the agent without one"},
		{"https://q7Vd0aLk3XbN9mPz2Rt5Yw8Ce1Fh4Gj6@agent.example.com/run", "the URL holds user info (often a token), which the stored run would keep; reach the agent without one"},
		{"https://agent.example.com/run?password=hunter2", `the URL's query parameter "password" names a credential, which the stored run would keep; reach the agent without one`},
		{"https://agent.example.com/api/agent?code=q7Vd0aLk3XbN9mPz2Rt5Yw8Ce1Fh4Gj6Ks0Lu3Mi9No2Pa5Qb8Rc1Sd==", `the URL's query parameter "code" names a credential, which the stored run would keep; reach the agent without one`},
		{"https://agent.example.com/run?sv=2022-11-02&sig=q7Vd0aLk3XbN9mPz%3D", `the URL's query parameter "sig" names a credential, which the stored run would keep; reach the agent without one`},
		{"https://agent.example.com/run?X-Functions-Key=abc", `the URL's query parameter "X-Functions-Key" names a credential, which the stored run would keep; reach the agent without one`},
		{"https://agent.example.com/run?Access_Token=abc", `the URL's query parameter "Access_Token" names a credential, which the stored run would keep; reach the agent without one`},
		{"https://agent.example.com/run?model=gpt-5&suite=flights&n=3", ""},
		{"ftp://agent.example.com/", "not an absolute http:// or https:// URL"},
		{"/relative", "not an absolute http:// or https:// URL"},
	}
	for _, tc := range tests {
		err := a.CheckURL(tc.url)
		got := ""
		if err != nil {
			got = err.Error()
			if !errors.Is(err, ErrRefused) {
				t.Errorf("CheckURL(%q) = %v, not ErrRefused", tc.url, err)
			}
		}
		if got != tc.want {
			t.Errorf("CheckURL(%q) = %q, want %q", tc.url, got, tc.want)
		}
	}
	empty := mustAllow(t)
	if err := empty.CheckURL("https://agent.example.com/"); err == nil ||
		err.Error() != "this server allows no agent hosts (set TOOLSCORE_RUN_ALLOWED_HOSTS to enable server-side runs)" {
		t.Errorf("empty list: %v", err)
	}
}

func TestCheckAddr(t *testing.T) {
	a := mustAllow(t, "agent.example.com", "10.9.0.0/16")
	for _, tc := range []struct {
		ip   string
		want string
	}{
		{"93.184.215.14", ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", ""},
		{"10.9.3.4", ""},
		{"127.0.0.1", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"},
		{"172.16.5.4", "private"},
		{"192.168.1.1", "private"},
		{"fd12::1", "private"},
		{"fd00:ec2::254", "private"},
		{"169.254.169.254", "link-local"},
		{"fe80::1", "link-local"},
		{"100.100.100.200", "reserved or metadata"},
		{"192.0.0.192", "reserved or metadata"},
		{"0.0.0.0", "unspecified"},
		{"255.255.255.255", "reserved or metadata"},
		{"239.1.2.3", "multicast"},
		{"64:ff9b::a9fe:a9fe", "reserved or metadata"},
	} {
		err := a.checkAddr(netip.MustParseAddr(tc.ip))
		if tc.want == "" {
			if err != nil {
				t.Errorf("checkAddr(%s) = %v, want allowed", tc.ip, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), " is a "+tc.want+" address") {
			t.Errorf("checkAddr(%s) = %v, want refused as %s", tc.ip, err, tc.want)
		}
	}
}

// localAgent serves h on 127.0.0.1 and returns its port.
func localAgent(t *testing.T, h http.HandlerFunc) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Port()
}

func TestClientChecksEveryConnection(t *testing.T) {
	hits := 0
	port := localAgent(t, func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path == "/redirect" {
			http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
			return
		}
		_, _ = w.Write([]byte(`[]`))
	})
	get := func(c *http.Client, u string) (*http.Response, error) {
		resp, err := c.Get(u)
		if err == nil {
			resp.Body.Close()
		}
		return resp, err
	}

	// An allowed name that resolves to a loopback address is refused when
	// connecting: what DNS rebinding would do.
	byName := NewHTTPClient(mustAllow(t, "localhost"), 2)
	if _, err := get(byName, "http://localhost:"+port+"/"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "is a loopback address") {
		t.Errorf("localhost by name: %v, want a loopback refusal", err)
	}
	// A name not on the list is refused before it is resolved.
	if _, err := get(byName, "http://127.0.0.1:"+port+"/"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "host 127.0.0.1 is not in") {
		t.Errorf("unlisted host: %v", err)
	}
	if hits != 0 {
		t.Fatalf("the agent was reached %d times", hits)
	}

	// Listed as an address, loopback is allowed; a redirect is answered,
	// not followed.
	byAddr := NewHTTPClient(mustAllow(t, "localhost", "127.0.0.1", "::1"), 2)
	resp, err := get(byAddr, "http://localhost:"+port+"/")
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("listed loopback: %v %v", resp, err)
	}
	resp, err = get(byAddr, "http://127.0.0.1:"+port+"/redirect")
	if err != nil || resp.StatusCode != http.StatusFound || hits != 2 {
		t.Errorf("redirect: %v, %v, %d hits; want the 302 itself", resp, err, hits)
	}
	if byAddr.Transport.(*http.Transport).Proxy != nil {
		t.Error("the client uses a proxy, whose address would be checked instead of the agent's")
	}
}

func TestGuardedRunner(t *testing.T) {
	port := localAgent(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/fail" {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("upstream said no; Authorization: Bearer sk-live-0123456789abcdefABCDEF; retry later please, the request was POST /v1/chat with a very long body"))
			return
		}
		_, _ = w.Write([]byte(`[]`))
	})
	req := &harness.Request{TaskID: "t"}

	// Refused at connect time: final, not a transport failure to retry.
	g := &guardedRunner{harness.HTTPRunner{URL: "http://localhost:" + port + "/", Client: NewHTTPClient(mustAllow(t, "localhost"), 2),
		ErrorExcerpt: redactExcerpt}}
	_, err := g.Run(context.Background(), req)
	if !errors.Is(err, ErrRefused) || harness.IsTransient(err) || !strings.HasPrefix(err.Error(), "agent unreachable: ") {
		t.Errorf("refused dial: %v (transient %v)", err, harness.IsTransient(err))
	}

	// An error answer is quoted short and redacted.
	g = &guardedRunner{harness.HTTPRunner{URL: "http://127.0.0.1:" + port + "/fail", Client: NewHTTPClient(mustAllow(t, "127.0.0.1"), 2),
		ErrorExcerpt: redactExcerpt}}
	_, err = g.Run(context.Background(), req)
	want := "agent answered 502 Bad Gateway: upstream said no; Authorization: [redacted] [redacted]; retry later please, the ..."
	if err == nil || err.Error() != want || !harness.IsTransient(err) {
		t.Errorf("error answer = %v, want %q (transient)", err, want)
	}
}

func TestRedactExcerpt(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"not found", "not found"},
		{"password=hunter2 for user x", "password=[redacted] for user x"},
		{"token: abc", "token: [redacted]"},
		{"key AKIAIOSFODNN7EXAMPLE leaked", "key [redacted] leaked"},
		{"jwt eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.sig", "jwt [redacted]"},
		{"internationalization problems", "internationalization problems"},
		{strings.Repeat("é", 60), strings.Repeat("é", 40) + "..."},
	} {
		if got := redactExcerpt(tc.in); got != tc.want {
			t.Errorf("redactExcerpt(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
