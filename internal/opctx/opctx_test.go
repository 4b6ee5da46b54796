package opctx

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReusedUntilDone(t *testing.T) {
	parent := context.Background()
	d := New(time.Hour)
	c1 := d.Start(parent)
	if dl, ok := c1.Deadline(); !ok || time.Until(dl) < 59*time.Minute {
		t.Fatalf("deadline %v %v", dl, ok)
	}
	d.Stop()
	c2 := d.Start(parent)
	d.Stop()
	if c1 != c2 || c2.Err() != nil {
		t.Fatalf("a context that is not done was not reused (%p, %p, %v)", c1, c2, c2.Err())
	}

	// An operation that overruns: its context is done with
	// DeadlineExceeded, and the next operation gets a fresh one.
	d.timeout = 10 * time.Millisecond
	c3 := d.Start(parent)
	select {
	case <-c3.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the overrunning operation's context is not done")
	}
	d.Stop()
	if !errors.Is(c3.Err(), context.DeadlineExceeded) {
		t.Fatalf("overrun error %v", c3.Err())
	}
	d.timeout = time.Hour
	c4 := d.Start(parent)
	d.Stop()
	if c4 == c3 || c4.Err() != nil {
		t.Fatal("a done context was reused")
	}
}

func TestParentEnds(t *testing.T) {
	parent, cancel := context.WithCancel(context.Background())
	d := New(time.Hour)
	c := d.Start(parent)
	cancel()
	select {
	case <-c.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the parent's end did not reach the operation's context")
	}
	d.Stop()
	if !errors.Is(c.Err(), context.Canceled) {
		t.Fatalf("err %v", c.Err())
	}
	// A parent with an earlier deadline bounds the operation.
	short, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	c2 := d.Start(short)
	defer d.Stop()
	want, _ := short.Deadline()
	if got, _ := c2.Deadline(); !got.Equal(want) {
		t.Fatalf("deadline %v, want the parent's %v", got, want)
	}
}

func TestNoAllocationsPerOperation(t *testing.T) {
	d := New(time.Hour)
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		_ = d.Start(ctx).Done()
		d.Stop()
	}); n != 0 {
		t.Fatalf("%v allocations per operation", n)
	}
}

// BenchmarkDeadline: 8 workers, each with its own Deadline, against
// context.WithTimeout from the run's shared context.
func BenchmarkDeadline(b *testing.B) {
	parent, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.Run("opctx", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			d := New(10 * time.Second)
			for pb.Next() {
				_ = d.Start(parent).Done()
				d.Stop()
			}
		})
	})
	b.Run("WithTimeout", func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(8)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c, cf := context.WithTimeout(parent, 10*time.Second)
				_ = c.Done()
				cf()
			}
		})
	})
}
