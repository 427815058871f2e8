// Package logging holds what the sidecar's log goes through before it is
// written: a buffer that batches writes, and a collapser that turns a storm
// of one error into a line and a count.
package logging

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// Buffer batches log lines into fewer writes: one write per request is
// a measurable share of a proxied request (docs/performance.md). Lines are
// written when 64 KiB have gathered, every flushEvery, and on Close; a
// crash of the process loses at most flushEvery of log.
type Buffer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	stop  chan struct{}
	done  chan struct{}
	every time.Duration
}

const FlushEvery = 100 * time.Millisecond

func NewBuffer(out io.Writer, every time.Duration) *Buffer {
	b := &Buffer{w: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{}), every: every}
	go tickUntil(b.every, b.stop, b.done, b.flush)
	return b
}

// Write takes one whole log line, as zerolog writes them.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.w.Write(p)
}

// tickUntil calls f every interval and once more when stop closes, then
// closes done.
func tickUntil(every time.Duration, stop <-chan struct{}, done chan<- struct{}, f func()) {
	defer close(done)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			f()
		case <-stop:
			f()
			return
		}
	}
}

func (b *Buffer) flush() {
	b.mu.Lock()
	b.w.Flush()
	b.mu.Unlock()
}

// Close writes what is buffered and stops the flusher.
func (b *Buffer) Close() {
	close(b.stop)
	<-b.done
}
