package main

import (
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"go.uber.org/zap"
)

// servePprof serves net/http/pprof's handlers under /debug/pprof/ on
// addr (Config.PprofAddr, a loopback address), apart from the API's
// listener, authentication and limits, until stop closes it; bound is
// the address it listens on. It is a debugging aid, off unless configured:
//
//	TOOLSCORE_PPROF_ADDR=127.0.0.1:6060 toolscore-server
//	go tool pprof -seconds 15 http://127.0.0.1:6060/debug/pprof/profile
//
// Errors: the address cannot be listened on.
func servePprof(addr string, log *zap.Logger) (bound net.Addr, stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second, ErrorLog: zap.NewStdLog(log.Named("pprof"))}
	go func() { _ = hs.Serve(ln) }()
	log.Warn("serving profiles (TOOLSCORE_PPROF_ADDR)", zap.String("addr", ln.Addr().String()))
	return ln.Addr(), func() { _ = hs.Close() }, nil
}
