package runs

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// Server-side runs POST to a URL a client chose, from inside the
// operator's network: without care, a request forgery (SSRF) into
// loopback services, the cloud metadata endpoint or private hosts. So:
//   - an agent host must be on the operator's allow-list (Config
//     AllowedHosts, TOOLSCORE_RUN_ALLOWED_HOSTS); an empty list refuses
//     every run;
//   - loopback, link-local, private, shared (CGNAT), unspecified,
//     multicast and metadata addresses are refused unless the allow-list
//     names them as addresses (an IP or a CIDR): an allowed host name that
//     resolves to one of them is refused;
//   - both checks run on every connection the client makes: the name in a
//     net.Dialer wrapper before it is resolved, the address in the
//     dialer's ControlContext hook after (so DNS rebinding, where a name
//     resolves to a public address when checked and to a private one when
//     used, cannot pass); no proxy is used (its address would be checked
//     instead of the agent's);
//   - redirects are not followed (a 3xx is the agent's answer, an error);
//   - an agent's error answer is reported as a short redacted excerpt
//     (errorExcerpt).

// ErrRefused is matched (errors.Is) by every refusal of an agent URL or
// address (a *RefusedError).
var ErrRefused = errors.New("agent address refused")

// RefusedError is a refused agent URL, host or address; its message says
// why, never quoting user info.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// Is makes errors.Is(err, ErrRefused) hold.
func (e *RefusedError) Is(target error) bool { return target == ErrRefused }

func refused(format string, args ...any) error {
	return &RefusedError{msg: fmt.Sprintf(format, args...)}
}

// AllowList is the set of agent hosts server-side runs may reach.
type AllowList struct {
	names    map[string]bool // exact host names, lowercase
	suffixes []string        // from "*.example.com": ".example.com"
	nets     []netip.Prefix  // IPs (as /32, /128) and CIDRs
}

// ParseAllowList reads allow-list entries: a host name ("agent.example.com",
// case-insensitive), a wildcard for its subdomains ("*.example.com", which
// does not match example.com itself), an IP address ("10.1.2.3",
// "::1") or a CIDR ("10.0.0.0/8"). Names match the URL's host; addresses
// and CIDRs match the URL's host when it is an IP literal, and the
// resolved address of any connection (the only way to allow a loopback,
// private or metadata address).
//
// Errors: an entry that is none of these, naming it.
func ParseAllowList(entries []string) (AllowList, error) {
	a := AllowList{names: map[string]bool{}}
	for _, e := range entries {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if p, err := netip.ParsePrefix(e); err == nil {
			a.nets = append(a.nets, p.Masked())
			continue
		}
		if ip, err := netip.ParseAddr(e); err == nil {
			a.nets = append(a.nets, netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen()))
			continue
		}
		name := strings.ToLower(e)
		wild := strings.HasPrefix(name, "*.")
		if wild {
			name = name[2:]
		}
		if !hostnamePattern.MatchString(name) {
			return AllowList{}, fmt.Errorf("allowed agent host %q is not a host name, *.name, IP address or CIDR", e)
		}
		if wild {
			a.suffixes = append(a.suffixes, "."+name)
		} else {
			a.names[name] = true
		}
	}
	return a, nil
}

// hostnamePattern is a DNS name: labels of letters, digits and hyphens.
var hostnamePattern = regexp.MustCompile(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$`)

// Empty reports whether the list allows nothing.
func (a AllowList) Empty() bool { return len(a.names) == 0 && len(a.suffixes) == 0 && len(a.nets) == 0 }

// allowsHost reports whether a URL's host (a name, or an IP literal
// without brackets) is on the list.
func (a AllowList) allowsHost(host string) bool {
	if ip, err := netip.ParseAddr(host); err == nil {
		return a.listsAddr(ip)
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a.names[host] {
		return true
	}
	for _, s := range a.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// listsAddr reports whether the list names ip (or a CIDR holding it).
func (a AllowList) listsAddr(ip netip.Addr) bool {
	ip = ip.Unmap()
	for _, p := range a.nets {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// specialNets are the address ranges refused unless listed: besides
// loopback, link-local, private, unspecified and multicast (netip's
// predicates), the shared address space of carrier-grade NAT, the
// IETF-reserved and benchmarking ranges, and the metadata endpoints of
// clouds that serve them outside link-local space.
var specialNets = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),          // "this network"
	netip.MustParsePrefix("100.64.0.0/10"),      // shared address space (CGNAT); Alibaba metadata 100.100.100.200
	netip.MustParsePrefix("192.0.0.0/24"),       // IETF protocol assignments (Oracle metadata 192.0.0.192)
	netip.MustParsePrefix("198.18.0.0/15"),      // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),        // reserved, and 255.255.255.255
	netip.MustParsePrefix("fd00:ec2::254/128"),  // AWS metadata over IPv6 (also in fc00::/7)
	netip.MustParsePrefix("64:ff9b::/96"),       // NAT64: would reach IPv4 space unchecked
	netip.MustParsePrefix("64:ff9b:1::/48"),     // local-use NAT64
	netip.MustParsePrefix("2002::/16"),          // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("2001::/32"),          // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("::ffff:0:0:0/96"),    // IPv4-translated
	netip.MustParsePrefix("169.254.169.254/32"), // cloud metadata (also link-local)
}

// restricted returns why an address is refused unless listed ("" when it
// is a public unicast address).
func restricted(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case ip.IsLoopback():
		return "loopback"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "link-local"
	case ip.IsPrivate():
		return "private"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsMulticast():
		return "multicast"
	}
	for _, p := range specialNets {
		if p.Contains(ip) {
			return "reserved or metadata"
		}
	}
	return ""
}

// checkAddr is the connect-time check of one resolved address.
func (a AllowList) checkAddr(ip netip.Addr) error {
	if a.listsAddr(ip) {
		return nil
	}
	if why := restricted(ip); why != "" {
		return refused("%s is a %s address, not in the allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)", ip.Unmap(), why)
	}
	return nil
}

// credentialSuffixes end the query parameter names taken for credentials
// (compared lower-cased, without '-', '_' and '.'): api_key,
// x-functions-key, access_token, client_secret, password, sig (SAS),
// code (Azure Functions), auth.
var credentialSuffixes = []string{"key", "token", "secret", "password", "passwd", "pwd", "pass", "sig", "signature", "code", "auth", "authorization", "credential", "credentials", "session", "jwt"}

// credentialParam reports whether a query parameter name is one a
// credential is commonly passed in.
func credentialParam(name string) bool {
	n := strings.NewReplacer("-", "", "_", "", ".", "").Replace(strings.ToLower(name))
	for _, suf := range credentialSuffixes {
		if strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// CheckURL is the request-time check of an agent URL: an absolute http or
// https URL without user info or a credential-named query parameter (a
// run stores its URL, so a credential would be stored with it), whose
// host is on the list.
//
// Errors: wrapping ErrRefused, saying what is wrong (never quoting the
// URL's user info).
func (a AllowList) CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return refused("not an absolute http:// or https:// URL")
	}
	if _, hasPassword := u.User.Password(); hasPassword {
		return refused("the URL holds a password, which the stored run would keep; reach the agent without one")
	}
	if u.User != nil {
		return refused("the URL holds user info (often a token), which the stored run would keep; reach the agent without one")
	}
	for name := range u.Query() {
		if credentialParam(name) {
			return refused("the URL's query parameter %q names a credential, which the stored run would keep; reach the agent without one", name)
		}
	}
	if a.Empty() {
		return refused("this server allows no agent hosts (set TOOLSCORE_RUN_ALLOWED_HOSTS to enable server-side runs)")
	}
	host := u.Hostname()
	if !a.allowsHost(host) {
		return refused("host %s is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)", host)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return a.checkAddr(ip)
	}
	return nil
}

// NewHTTPClient returns the client runs reach agents with: every
// connection checked against a (its host name before resolution, its
// address after, in the dialer's ControlContext), no proxy, no
// redirects, keeping up to maxIdle idle connections per host. Timeouts
// come from each attempt's context.
func NewHTTPClient(a AllowList, maxIdle int) *http.Client {
	d := &net.Dialer{
		Timeout:   10 * time.Second,
		KeepAlive: 30 * time.Second,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return refused("cannot read the address %q", address)
			}
			return a.checkAddr(ap.Addr())
		},
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = func(ctx context.Context, network, address string) (net.Conn, error) {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return nil, refused("%v", err)
		}
		if !a.allowsHost(host) {
			return nil, refused("host %s is not in this server's allowed agent hosts (TOOLSCORE_RUN_ALLOWED_HOSTS)", host)
		}
		return d.DialContext(ctx, network, address)
	}
	t.MaxIdleConnsPerHost = max(maxIdle, 2)
	t.MaxIdleConns = max(t.MaxIdleConns, maxIdle)
	return &http.Client{
		Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse // a 3xx is the agent's answer
		},
	}
}

// maxExcerpt is the most of an agent's error answer a task reports.
const maxExcerpt = 80

// opaqueToken is a run of token-like characters long enough to be a
// credential (or an identifier nobody needs in an error excerpt).
var opaqueToken = regexp.MustCompile(`[A-Za-z0-9_\-+/=.~:]{16,}`)

// secretAssignment is "name=value" or "name: value" with a secret-like
// name.
var secretAssignment = regexp.MustCompile(`(?i)((?:pass(?:word|wd)?|secret|token|api[_-]?key|auth\w*|bearer|credential|session|cookie)\s*[:=]\s*|bearer\s+)\S+`)

// redactExcerpt returns at most maxExcerpt bytes of an agent's error
// text with what may be secret replaced by [redacted]: values of
// secret-named assignments and any long opaque token (which covers API
// keys, JWTs and session ids whatever their provider), so an agent that
// echoes its request or its credentials in an error page does not get
// them into the run's stored reason.
func redactExcerpt(s string) string {
	s = secretAssignment.ReplaceAllString(s, "${1}[redacted]")
	s = opaqueToken.ReplaceAllStringFunc(s, func(tok string) string {
		if strings.ContainsAny(tok, "0123456789") || strings.ContainsAny(tok, "_-+/=") {
			return "[redacted]"
		}
		return tok // a long plain word
	})
	if len(s) > maxExcerpt {
		s = s[:maxExcerpt]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1] // do not cut a UTF-8 sequence
		}
		s += "..."
	}
	return s
}
