package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/cachetag"
	"github.com/wpsidecar/wpsidecar/internal/redact"
)

// Purge is what a change makes stale in caches: cache tags (as the
// sidecar's answers carry them in Cache-Tag and Surrogate-Key) and URLs.
type Purge struct {
	Tags []string
	URLs []*url.URL
}

func (p Purge) empty() bool { return len(p.Tags) == 0 && len(p.URLs) == 0 }

// merge adds q to p, without repeats.
func (p *Purge) merge(q Purge) {
	for _, t := range q.Tags {
		if !slices.Contains(p.Tags, t) {
			p.Tags = append(p.Tags, t)
		}
	}
	for _, u := range q.URLs {
		if !slices.ContainsFunc(p.URLs, func(v *url.URL) bool { return v.String() == u.String() }) {
			p.URLs = append(p.URLs, u)
		}
	}
}

// Purges subscribe to commits and queue, in each purger, what a commit
// makes stale: the namespace's tag (answers whose tags overflowed carry
// only it), each changed key's or id's tag (and every list's, for a
// namespace whose unit is Listed: the field groups'), all named as the commit's site names them; and the URLs that
// show what changed (URLs: the site's public routes, under its home; nil
// leaves them out).
type Purges struct {
	Purgers []*Purger
	// Units are the namespaces served: whether a namespace is Listed.
	Units wpsidecar.Units
	URLs  func(wpsidecar.Commit) []*url.URL
}

// Touched is nothing to purge.
func (Purges) Touched(wpsidecar.Touched) {}

func (p Purges) Commit(c wpsidecar.Commit) {
	x := PurgeOf(c, p.Units, p.URLs)
	for _, q := range p.Purgers {
		q.Purge(x)
	}
}

// PurgeOf is what c makes stale (see Purges), its namespace's list
// included when its unit among units is Listed.
func PurgeOf(c wpsidecar.Commit, units wpsidecar.Units, urls func(wpsidecar.Commit) []*url.URL) Purge {
	u := units.Find(c.Namespace)
	x := Purge{Tags: cachetag.Stale(c.BlogID, string(c.Namespace), u != nil && u.Listed(), c.DistinctKeys())}
	if urls != nil {
		x.URLs = urls(c)
	}
	return x
}

// Adapter turns a purge into a CDN's requests.
type Adapter interface {
	// Name names the CDN in logs and metrics: varnish, cloudflare, fastly, nginx.
	Name() string
	// Requests are the requests that purge p; an adapter that cannot purge
	// by tag (nginx) or by URL ignores that part.
	Requests(p Purge) ([]*http.Request, error)
}

// Purger sends an adapter's purges: gathered (a request never waits)
// into a set of what is pending, sent in batches over a short window,
// retried with backoff while the CDN fails or hangs, for as long as it
// takes: a purge is never dropped. Past a bound the pending tags are
// made broader (cachetag.Broad: an entity's tag its namespace's), so
// that a CDN that does not answer for a long while costs bounded memory
// and is purged of at least everything that changed once it answers. A
// batch the CDN refuses as too large is split and sent again.
type Purger struct {
	a Adapter
	// Client sends the requests (a 10 s timeout by default).
	Client *http.Client
	log    zerolog.Logger
	// Window is how long changes are gathered into one batch.
	Window time.Duration
	// Attempts per request before the batch goes back to the pending set
	// (and waits the longest pause), the first pause between them
	// doubling, at most MaxPause.
	Attempts          int
	Backoff, MaxPause time.Duration
	sent              atomic.Uint64
	failed            atomic.Uint64

	mu      sync.Mutex
	pending Purge
	wake    chan struct{} // a value when pending is not empty
}

// Bounds of the pending set: past maxPendingTags its tags are made
// broader; past maxPendingURLs new URLs are dropped (logged: a URL has
// nothing broader; nginx purges only URLs).
const (
	maxPendingTags = 4096
	maxPendingURLs = 4096
)

// NewPurger sends a's purges.
func NewPurger(a Adapter, log zerolog.Logger) *Purger {
	return &Purger{a: a, Client: &http.Client{Timeout: 10 * time.Second}, wake: make(chan struct{}, 1),
		log: log.With().Str("cdn", a.Name()).Logger(), Window: 100 * time.Millisecond, Attempts: 5, Backoff: 500 * time.Millisecond, MaxPause: 30 * time.Second}
}

// Name is the adapter's.
func (p *Purger) Name() string { return p.a.Name() }

// Counts are the requests sent and refused for good.
func (p *Purger) Counts() (sent, failed uint64) { return p.sent.Load(), p.failed.Load() }

// Purge adds x to what is pending, without waiting.
func (p *Purger) Purge(x Purge) {
	if x.empty() {
		return
	}
	p.mu.Lock()
	p.pend(x)
	p.mu.Unlock()
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// pend merges x into the pending set, within its bounds; p.mu held.
func (p *Purger) pend(x Purge) {
	urls := len(p.pending.URLs)
	p.pending.merge(x)
	if n := len(p.pending.URLs); n > maxPendingURLs {
		p.log.Error().Int("urls", n-maxPendingURLs).Msg("purge of URLs dropped: too many pending while the CDN does not answer")
		p.pending.URLs = p.pending.URLs[:max(urls, maxPendingURLs)]
	}
	if len(p.pending.Tags) > maxPendingTags {
		broad := Purge{}
		for _, t := range p.pending.Tags {
			broad.merge(Purge{Tags: []string{cachetag.Broad(t)}})
		}
		p.log.Warn().Int("tags", len(p.pending.Tags)).Strs("broader", broad.Tags).Msg("too many purges pending: purging broader tags")
		p.pending.Tags = broad.Tags
	}
}

// take empties the pending set.
func (p *Purger) take() Purge {
	p.mu.Lock()
	defer p.mu.Unlock()
	x := p.pending
	p.pending = Purge{}
	return x
}

// Run sends batches until ctx ends; what it could not send stays pending
// (Drain sends it).
func (p *Purger) Run(ctx context.Context) {
	pause := p.Backoff
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.wake:
		}
		select { // gather
		case <-ctx.Done():
		case <-time.After(p.Window):
		}
		batch := p.take()
		if batch.empty() {
			continue
		}
		rest, ok := p.send(ctx, batch)
		if !rest.empty() {
			p.Purge(rest) // before the next: nothing is lost
		}
		if !ok {
			return
		}
		if rest.empty() {
			pause = p.Backoff
			continue
		}
		pause = min(2*pause, p.MaxPause)
		p.log.Warn().Dur("retry_in", pause).Int("tags", len(rest.Tags)).Int("urls", len(rest.URLs)).Msg("the CDN does not take purges; kept pending")
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
	}
}

// Drain sends what is pending once Run has returned, until ctx ends; what
// is left then is logged as dropped.
func (p *Purger) Drain(ctx context.Context) {
	batch := p.take()
	if batch.empty() {
		return
	}
	if rest, ok := p.send(ctx, batch); !ok || !rest.empty() {
		p.log.Error().Strs("tags", rest.Tags).Int("urls", len(rest.URLs)).Msg("shutting down: purge dropped")
	}
}

// send makes a batch's requests, each tried Attempts times: rest is what
// is still to send (the CDN failed or did not answer), false when ctx
// ended first. A batch of several tags refused as too large is split in
// two, each sent on its own; one refused otherwise is given up.
func (p *Purger) send(ctx context.Context, batch Purge) (rest Purge, ok bool) {
	reqs, err := p.a.Requests(batch)
	if err != nil {
		p.failed.Add(1)
		p.log.Error().Err(redact.Error(err)).Msg("purge not sent")
		return Purge{}, true
	}
	for _, req := range reqs {
		err := p.try(ctx, req)
		switch {
		case err == nil:
			p.sent.Add(1)
			p.log.Info().Str("method", req.Method).Str("url", redact.URL(req.URL)).Strs("tags", batch.Tags).Msg("purged")
		case ctx.Err() != nil:
			return batch, false
		case errors.Is(err, errTooLarge) && len(batch.Tags) > 1:
			// What went out already goes again: a purge twice is harmless.
			half := len(batch.Tags) / 2
			p.log.Warn().Err(redact.Error(err)).Int("tags", len(batch.Tags)).Msg("purge refused as too large; split in two")
			for _, part := range []Purge{{Tags: batch.Tags[:half], URLs: batch.URLs}, {Tags: batch.Tags[half:]}} {
				r, ok := p.send(ctx, part)
				rest.merge(r)
				if !ok {
					return rest, false
				}
			}
			return rest, true
		case errors.Is(err, errPermanent):
			p.failed.Add(1)
			p.log.Error().Err(redact.Error(err)).Str("method", req.Method).Str("url", redact.URL(req.URL)).Strs("tags", batch.Tags).Msg("purge refused; given up")
		default:
			return batch, true // what went out already goes again
		}
	}
	return Purge{}, true
}

// try sends req up to Attempts times; nil once it went through, the last
// error otherwise.
func (p *Purger) try(ctx context.Context, req *http.Request) error {
	pause := p.Backoff
	for attempt := 1; ; attempt++ {
		err := p.do(ctx, req)
		if err == nil || ctx.Err() != nil || errors.Is(err, errPermanent) || attempt == p.Attempts {
			return err
		}
		p.log.Warn().Err(redact.Error(err)).Int("attempt", attempt).Dur("retry_in", pause).Msg("purge failed; will retry")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, p.MaxPause)
	}
}

// errTooLarge: the CDN refused a purge as too large (its header or
// target); a smaller one may go through.
var errTooLarge = fmt.Errorf("%w: too large", errPermanent)

func (p *Purger) do(ctx context.Context, req *http.Request) error {
	r := req.Clone(ctx)
	if req.GetBody != nil {
		r.Body, _ = req.GetBody()
	}
	err := send(p.Client, r)
	var ref refusal
	if errors.As(err, &ref) && slices.Contains([]int{400, 413, 414, 431}, ref.code) {
		// 400 is Varnish's answer to a header over its limit.
		return fmt.Errorf("%w (%s)", errTooLarge, ref.status)
	}
	return err
}

// Varnish purges a Varnish (with varnish-modules' xkey) by tag, and by URL,
// as the VCL in deploy/varnish/ answers them: PURGE with an xkey-purge
// (or, soft, xkey-softpurge) header of space-separated tags, and PURGE of
// each URL's path with its Host.
type Varnish struct {
	Base *url.URL // the Varnish to send purges to, e.g. http://127.0.0.1:6081
	Soft bool
}

func (Varnish) Name() string { return "varnish" }

// varnishHeader bounds an xkey-purge header: Varnish refuses a request
// with a header over http_req_hdr_len (8 KB by default) with a 400.
const varnishHeader = 4000

func (v Varnish) Requests(p Purge) ([]*http.Request, error) {
	var out []*http.Request
	header := "xkey-purge"
	if v.Soft {
		header = "xkey-softpurge"
	}
	for tags := p.Tags; len(tags) > 0; {
		n, size := 0, 0
		for n < len(tags) && (n == 0 || size+1+len(tags[n]) <= varnishHeader) {
			size += 1 + len(tags[n])
			n++
		}
		req, err := http.NewRequest("PURGE", v.Base.JoinPath("/").String(), nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set(header, strings.Join(tags[:n], " "))
		out = append(out, req)
		tags = tags[n:]
	}
	urls, err := Nginx{Base: v.Base}.Requests(Purge{URLs: p.URLs})
	return append(out, urls...), err
}

// Nginx purges URLs from an nginx proxy cache (ngx_cache_purge's PURGE of
// the URL, with the site's Host); nginx has no tags.
type Nginx struct {
	Base *url.URL // the nginx to send purges to
}

func (Nginx) Name() string { return "nginx" }

func (n Nginx) Requests(p Purge) ([]*http.Request, error) {
	var out []*http.Request
	for _, u := range p.URLs {
		target := *n.Base
		target.Path, target.RawPath, target.RawQuery = u.Path, u.RawPath, u.RawQuery
		req, err := http.NewRequest("PURGE", target.String(), nil)
		if err != nil {
			return nil, err
		}
		req.Host = u.Host
		out = append(out, req)
	}
	return out, nil
}

// Cloudflare purges through Cloudflare's API: POST
// /client/v4/zones/{zone}/purge_cache with {"tags":[…]} and {"files":[…]},
// at most 30 of either a request, with an API token.
type Cloudflare struct {
	API   *url.URL // https://api.cloudflare.com
	Zone  string
	Token string
}

// cloudflareBatch is the most tags or files one purge request carries.
const cloudflareBatch = 30

func (Cloudflare) Name() string { return "cloudflare" }

func (c Cloudflare) Requests(p Purge) ([]*http.Request, error) {
	target := c.API.JoinPath("client", "v4", "zones", c.Zone, "purge_cache").String()
	var out []*http.Request
	add := func(field string, items []string) error {
		for len(items) > 0 {
			n := min(len(items), cloudflareBatch)
			body, _ := json.Marshal(map[string][]string{field: items[:n]})
			items = items[n:]
			req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
			if err != nil {
				return err
			}
			req.Header.Set("Authorization", "Bearer "+c.Token)
			req.Header.Set("Content-Type", "application/json")
			out = append(out, req)
		}
		return nil
	}
	var files []string
	for _, u := range p.URLs {
		files = append(files, u.String())
	}
	if err := add("tags", p.Tags); err != nil {
		return nil, err
	}
	return out, add("files", files)
}

// Fastly purges by surrogate key through Fastly's API: POST
// /service/{id}/purge with the keys in a Surrogate-Key header (at most 256
// a request), a Fastly-Key token, and Fastly-Soft-Purge for soft purges.
type Fastly struct {
	API     *url.URL // https://api.fastly.com
	Service string
	Token   string
	Soft    bool
}

// fastlyBatch is the most keys one purge request carries.
const fastlyBatch = 256

func (Fastly) Name() string { return "fastly" }

func (f Fastly) Requests(p Purge) ([]*http.Request, error) {
	target := f.API.JoinPath("service", f.Service, "purge").String()
	var out []*http.Request
	for tags := p.Tags; len(tags) > 0; {
		n := min(len(tags), fastlyBatch)
		req, err := http.NewRequest(http.MethodPost, target, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Fastly-Key", f.Token)
		req.Header.Set("Surrogate-Key", strings.Join(tags[:n], " "))
		req.Header.Set("Accept", "application/json")
		if f.Soft {
			req.Header.Set("Fastly-Soft-Purge", "1")
		}
		tags = tags[n:]
		out = append(out, req)
	}
	return out, nil
}

// TagPurges are the purges of the answers CDNs keep of PHP's (a
// changes.Subscriber, of the leader's: changes.Sender): the tags of what
// each transaction dropped (--cache-rest's Cache.Tags), queued in every
// purger.
type TagPurges struct {
	Tags    func(wpsidecar.Touched) []string
	Purgers []*Purger
}

func (p TagPurges) Touched(t wpsidecar.Touched) {
	if tags := p.Tags(t); len(tags) > 0 {
		for _, q := range p.Purgers {
			q.Purge(Purge{Tags: tags})
		}
	}
}

// Commit is none of these purges' business.
func (TagPurges) Commit(wpsidecar.Commit) {}
