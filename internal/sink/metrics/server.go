package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultPort is the port --metrics-addr uses when given only a host.
const DefaultPort = "9464"

// NormalizeAddr turns a --metrics-addr value into a listen address. The
// endpoint tells anyone who can reach it what is being benchmarked, so it
// binds loopback unless a host is named: "9464" and ":9464" become
// 127.0.0.1:9464; "0.0.0.0:9464" or a host name are taken as given.
func NormalizeAddr(addr string) (string, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return "", errors.New("metrics address is empty")
	}
	if _, err := strconv.ParseUint(addr, 10, 16); err == nil {
		return net.JoinHostPort("127.0.0.1", addr), nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		// A bare host: use the default port.
		if strings.Contains(err.Error(), "missing port") {
			return net.JoinHostPort(strings.Trim(addr, "[]"), DefaultPort), nil
		}
		return "", fmt.Errorf("metrics address %q: %w", addr, err)
	}
	if port == "" {
		port = DefaultPort
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return "", fmt.Errorf("metrics address %q: bad port %q", addr, port)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port), nil
}

// Server serves /metrics on its own listener.
type Server struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Listen binds addr (normalized by NormalizeAddr) and serves h at /metrics
// in the background.
func Listen(addr string, h http.Handler) (*Server, error) {
	a, err := NormalizeAddr(addr)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", a)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", h)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		// A client that went away cannot be told; the handler has no
		// one else to report a failed write to.
		_, _ = fmt.Fprintln(w, "ycsbctl: Prometheus metrics at /metrics")
	})
	s := &Server{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, err: make(chan error, 1)}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr returns the bound address (useful with port 0).
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns the metrics URL.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops serving, letting scrapes in progress finish for a moment.
func (s *Server) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}
