package main

import (
	"bufio"
	"io"
	"sync"
	"time"
)

// logBuffer batches log lines into fewer writes: one write per request is
// a measurable share of a proxied request (README: Performance). Lines are
// written when 64 KiB have gathered, every flushEvery, and on Close; a
// crash of the process loses at most flushEvery of log.
type logBuffer struct {
	mu    sync.Mutex
	w     *bufio.Writer
	stop  chan struct{}
	done  chan struct{}
	every time.Duration
}

const logFlushEvery = 100 * time.Millisecond

func newLogBuffer(out io.Writer, every time.Duration) *logBuffer {
	b := &logBuffer{w: bufio.NewWriterSize(out, 64<<10), stop: make(chan struct{}), done: make(chan struct{}), every: every}
	go tickUntil(b.every, b.stop, b.done, b.flush)
	return b
}

// Write takes one whole log line, as zerolog writes them.
func (b *logBuffer) Write(p []byte) (int, error) {
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

func (b *logBuffer) flush() {
	b.mu.Lock()
	b.w.Flush()
	b.mu.Unlock()
}

// Close writes what is buffered and stops the flusher.
func (b *logBuffer) Close() {
	close(b.stop)
	<-b.done
}
