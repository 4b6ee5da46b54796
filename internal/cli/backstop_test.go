package cli

import (
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeSignals is signal.Notify and signal.Stop over channels the test
// delivers to, as the kernel delivers a signal to every registered one.
type fakeSignals struct {
	mu    sync.Mutex
	chans map[chan<- os.Signal]bool
}

func (f *fakeSignals) notify(c chan<- os.Signal, _ ...os.Signal) {
	f.mu.Lock()
	f.chans[c] = true
	f.mu.Unlock()
}

func (f *fakeSignals) stop(c chan<- os.Signal) {
	f.mu.Lock()
	delete(f.chans, c)
	f.mu.Unlock()
}

func (f *fakeSignals) deliver(sig os.Signal) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.chans {
		select {
		case c <- sig:
		default:
		}
	}
}

// TestSignalBackstop: a SIGTERM before any command listens takes its
// default action; one while a command listens is the command's alone; one
// after the last listener stopped (the run is over and recorded) is
// ignored, so that the process exits with the code its record holds
// instead of dying of the signal.
func TestSignalBackstop(t *testing.T) {
	cases := []struct {
		name string
		// before runs before the signal, on the backstop's state.
		before func(b *signalBackstop, c chan os.Signal)
		raised bool
	}{
		{"nobody listened yet", func(*signalBackstop, chan os.Signal) {}, true},
		{"a command listens", func(b *signalBackstop, c chan os.Signal) { b.listen(c, syscall.SIGTERM) }, false},
		{"the command has stopped listening", func(b *signalBackstop, c chan os.Signal) {
			b.listen(c, syscall.SIGTERM)
			b.unlisten(c)
		}, false},
		{"one of two still listens", func(b *signalBackstop, c chan os.Signal) {
			b.listen(c, syscall.SIGTERM)
			other := make(chan os.Signal, 1)
			b.listen(other, syscall.SIGTERM)
			b.unlisten(other)
		}, false},
		{"a stop of a channel never listened on changes nothing", func(b *signalBackstop, c chan os.Signal) { b.unlisten(c) }, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeSignals{chans: map[chan<- os.Signal]bool{}}
			b := newSignalBackstop(f.notify, f.stop, func(os.Signal) {})
			c.before(b, make(chan os.Signal, 4))
			assert.Equal(t, c.raised, b.unheard(), "the signal takes its default action")
		})
	}
	t.Run("delivered before any listener, it is raised", func(t *testing.T) {
		f := &fakeSignals{chans: map[chan<- os.Signal]bool{}}
		raised := make(chan os.Signal, 1)
		b := newSignalBackstop(f.notify, f.stop, func(s os.Signal) { raised <- s })
		end := b.start()
		defer end()
		f.deliver(syscall.SIGTERM)
		require.Equal(t, syscall.SIGTERM, <-raised)
	})
	t.Run("no RaiseSignal, no backstop", func(t *testing.T) {
		f := &fakeSignals{chans: map[chan<- os.Signal]bool{}}
		gs := &GlobalState{SignalNotify: f.notify, SignalStop: f.stop}
		got, end := withSignalBackstop(gs)
		defer end()
		assert.Same(t, gs, got)
		assert.Empty(t, f.chans)
	})
}
