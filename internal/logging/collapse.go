package logging

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"
	"time"
)

// Collapser keeps log storms readable: a warning or error line that
// repeats — the same level, message and fields but for its time and
// request id — is written the first time in an interval, and the rest of
// the interval's repeats become one line with their count ("repeated"),
// written when the interval ends. Access lines (message "request") are
// never collapsed: --access-log decides those. It takes whole lines, as
// zerolog writes them, and sits before the console writer.
type Collapser struct {
	out   io.Writer
	every time.Duration

	mu   sync.Mutex
	seen map[string]*repeats // by the line without time and request id
	stop chan struct{}
	done chan struct{}
}

type repeats struct {
	fields map[string]any
	n      int
}

// CollapseEvery is the interval; maxCollapsed bounds the distinct lines
// followed in one (past it, lines are written as they come).
const (
	CollapseEvery = 10 * time.Second
	maxCollapsed  = 1000
)

func NewCollapser(out io.Writer, every time.Duration) *Collapser {
	c := &Collapser{out: out, every: every, seen: map[string]*repeats{}, stop: make(chan struct{}), done: make(chan struct{})}
	go tickUntil(c.every, c.stop, c.done, c.flush)
	return c
}

var (
	levelWarn     = []byte(`{"level":"warn"`)
	levelError    = []byte(`{"level":"error"`)
	accessMessage = []byte(`"message":"request"}`)
)

func (c *Collapser) Write(p []byte) (int, error) {
	if !bytes.HasPrefix(p, levelWarn) && !bytes.HasPrefix(p, levelError) || bytes.HasSuffix(bytes.TrimSpace(p), accessMessage) {
		return c.out.Write(p)
	}
	var fields map[string]any
	if json.Unmarshal(p, &fields) != nil {
		return c.out.Write(p)
	}
	delete(fields, "time")
	delete(fields, "request_id")
	key, _ := json.Marshal(fields) // keys in order: the same line, the same key
	c.mu.Lock()
	if r := c.seen[string(key)]; r != nil {
		r.n++
		c.mu.Unlock()
		return len(p), nil
	}
	if len(c.seen) < maxCollapsed {
		c.seen[string(key)] = &repeats{fields: fields}
	}
	c.mu.Unlock()
	return c.out.Write(p)
}

// flush writes the interval's counts and starts a new interval.
func (c *Collapser) flush() {
	c.mu.Lock()
	seen := c.seen
	c.seen = map[string]*repeats{}
	c.mu.Unlock()
	now := time.Now().Format(time.RFC3339)
	for _, r := range seen {
		if r.n == 0 {
			continue
		}
		r.fields["repeated"] = r.n
		r.fields["interval_s"] = c.every.Seconds()
		r.fields["time"] = now
		line, _ := json.Marshal(r.fields)
		c.out.Write(append(line, '\n'))
	}
}

// Close writes the last counts and stops the interval.
func (c *Collapser) Close() {
	close(c.stop)
	<-c.done
}
