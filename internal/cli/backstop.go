package cli

import (
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// signalBackstop decides what the operator's SIGINT or SIGTERM does when
// no command is listening for it. Commands listen while they run a load
// (a run session, a suite, a capacity search, an agent) and stop listening
// when it is over; a signal between the end of the last one and the
// process's exit used to take the default action and kill the process
// (exit 143) after run.json had recorded another exit code (a second
// SIGTERM just after "Results:"). So:
//   - while a command listens, the backstop leaves the signal to it;
//   - once one has listened and stopped, the work is done and recorded,
//     and the signal is ignored: the process exits with the code recorded;
//   - before any command listened (parsing, connecting), the signal takes
//     its default action, as if ycsbctl had installed nothing.
type signalBackstop struct {
	notify func(c chan<- os.Signal, sig ...os.Signal)
	stop   func(c chan<- os.Signal)
	// raise takes sig's default action (the process ends).
	raise func(os.Signal)

	mu        sync.Mutex
	listening map[chan<- os.Signal]bool
	done      bool // a listener has come and gone
}

// withSignalBackstop returns a copy of gs whose SignalNotify and
// SignalStop are tracked by a backstop listening for SIGINT and SIGTERM
// from now on; stop ends the backstop.
func withSignalBackstop(gs *GlobalState) (*GlobalState, func()) {
	if gs.SignalNotify == nil || gs.SignalStop == nil || gs.RaiseSignal == nil {
		return gs, func() {}
	}
	b := newSignalBackstop(gs.SignalNotify, gs.SignalStop, gs.RaiseSignal)
	end := b.start()
	g := *gs
	g.SignalNotify, g.SignalStop = b.listen, b.unlisten
	return &g, end
}

func newSignalBackstop(notify func(chan<- os.Signal, ...os.Signal), stop func(chan<- os.Signal), raise func(os.Signal)) *signalBackstop {
	return &signalBackstop{notify: notify, stop: stop, raise: raise, listening: map[chan<- os.Signal]bool{}}
}

// start listens for SIGINT and SIGTERM until the returned function is
// called.
func (b *signalBackstop) start() func() {
	sigs := make(chan os.Signal, 4)
	quit := make(chan struct{})
	b.notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		defer b.stop(sigs)
		for {
			select {
			case sig := <-sigs:
				if b.unheard() {
					b.raise(sig)
					return
				}
			case <-quit:
				return
			}
		}
	}()
	var once sync.Once
	return func() { once.Do(func() { close(quit) }) }
}

func (b *signalBackstop) listen(c chan<- os.Signal, sig ...os.Signal) {
	b.mu.Lock()
	b.listening[c] = true
	b.mu.Unlock()
	b.notify(c, sig...)
}

func (b *signalBackstop) unlisten(c chan<- os.Signal) {
	b.stop(c)
	b.mu.Lock()
	if b.listening[c] {
		delete(b.listening, c)
		b.done = b.done || len(b.listening) == 0
	}
	b.mu.Unlock()
}

// unheard reports whether a signal just received has nobody to act on it
// and should take its default action.
func (b *signalBackstop) unheard() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.listening) == 0 && !b.done
}

// raiseDefault gives sig back its default action and sends it to this
// process again: it ends as if ycsbctl had never caught it.
func raiseDefault(sig os.Signal) {
	signal.Reset(sig)
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}
