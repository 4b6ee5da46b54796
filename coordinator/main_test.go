package coordinator

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/ycsbctl/ycsbctl/agent"
	"github.com/ycsbctl/ycsbctl/internal/properties"
	"github.com/ycsbctl/ycsbctl/internal/run"
	"github.com/ycsbctl/ycsbctl/internal/transport"
)

// The process tests re-execute this test binary as a real agent or
// coordinator (Prometheus' trick): TestMain dispatches on an environment
// variable before any test runs, so no separate build is needed and the
// processes run exactly the code under test.
const (
	envRole   = "YCSBCTL_TEST_ROLE"
	envConfig = "YCSBCTL_TEST_CONFIG"
)

// procAgentConfig is the JSON handed to an agent process.
type procAgentConfig struct {
	Listen  string
	TLS     *transport.TLSFiles
	Token   string
	LeaseMs int64
	Props   map[string]string
	// BallastMB and GCEveryMs make the agent process recognisable in
	// ycsbctl.trackruntime's figures: heap it holds, and collections it
	// forces.
	BallastMB int
	GCEveryMs int
}

// ballast keeps an agent process' BallastMB reachable.
var ballast []byte

// procCoordConfig is the JSON handed to a coordinator process.
type procCoordConfig struct {
	DB          string
	Load        bool
	Props       map[string]string
	Agents      []string
	Results     string
	OnAgentLoss string
	TLS         *transport.TLSFiles
	Token       string
	Status      bool
}

func TestMain(m *testing.M) {
	switch os.Getenv(envRole) {
	case "agent":
		os.Exit(agentMain())
	case "coordinator":
		os.Exit(coordinatorMain())
	}
	os.Exit(m.Run())
}

func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func agentMain() int {
	var c procAgentConfig
	if err := json.Unmarshal([]byte(os.Getenv(envConfig)), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := signalContext()
	defer cancel()
	if c.BallastMB > 0 {
		ballast = make([]byte, c.BallastMB<<20)
		for i := 0; i < len(ballast); i += 4096 {
			ballast[i] = 1
		}
	}
	if c.GCEveryMs > 0 {
		go func() {
			for ctx.Err() == nil {
				time.Sleep(time.Duration(c.GCEveryMs) * time.Millisecond)
				runtime.GC()
			}
		}()
	}
	err := agent.Serve(ctx, agent.Config{
		Listen: c.Listen, TLS: c.TLS, Token: c.Token, Lease: time.Duration(c.LeaseMs) * time.Millisecond, Properties: c.Props,
		Logf:  func(f string, a ...any) { fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05.000 ")+f+"\n", a...) },
		Ready: func(addr string) { fmt.Printf("LISTENING %s\n", addr) },
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	runtime.KeepAlive(ballast)
	return 0
}

func coordinatorMain() int {
	var c procCoordConfig
	if err := json.Unmarshal([]byte(os.Getenv(envConfig)), &c); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	ctx, cancel := signalContext()
	defer cancel()
	phase := run.Run
	if c.Load {
		phase = run.Load
	}
	code, err := runSession(ctx, runConfig{DB: c.DB, Phase: phase, Props: properties.FromMap(c.Props), Agents: c.Agents,
		ResultsDir: c.Results, OnAgentLoss: c.OnAgentLoss, TLS: c.TLS, Token: c.Token, Status: c.Status,
		Stdout: os.Stdout, Stderr: os.Stderr})
	if err != nil {
		fmt.Fprintf(os.Stderr, "ERROR: %v\n", err)
	}
	return int(code)
}
