package changes

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
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
func (Purges) Touched(Touched) {}

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
	x := Purge{Tags: cachetag.Stale(c.Site, string(c.Namespace), u != nil && u.Listed(), keys(c))}
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

// Purger sends an adapter's purges: queued (a request never waits),
// batched over a short window, retried with backoff, failures logged and
// counted.
type Purger struct {
	a      Adapter
	client *http.Client
	queue  chan Purge
	log    zerolog.Logger
	// Window is how long changes are gathered into one batch.
	Window time.Duration
	// Attempts per request, the first pause between them doubling.
	Attempts int
	Backoff  time.Duration
	sent     atomic.Uint64
	failed   atomic.Uint64
	cut      *Purge // what Run was sending when it stopped
}

// purgeQueue bounds the purges waiting; past it the newest is dropped and
// logged (the next change purges again).
const purgeQueue = 1024

// NewPurger sends a's purges.
func NewPurger(a Adapter, log zerolog.Logger) *Purger {
	return &Purger{a: a, client: &http.Client{Timeout: 10 * time.Second}, queue: make(chan Purge, purgeQueue),
		log: log.With().Str("cdn", a.Name()).Logger(), Window: 100 * time.Millisecond, Attempts: 5, Backoff: 500 * time.Millisecond}
}

// Name is the adapter's.
func (p *Purger) Name() string { return p.a.Name() }

// Counts are the requests sent and failed for good.
func (p *Purger) Counts() (sent, failed uint64) { return p.sent.Load(), p.failed.Load() }

// Purge queues x without waiting.
func (p *Purger) Purge(x Purge) {
	if x.empty() {
		return
	}
	select {
	case p.queue <- x:
	default:
		p.log.Error().Strs("tags", x.Tags).Msg("purge queue full; purge dropped")
	}
}

// Run sends batches until ctx ends.
func (p *Purger) Run(ctx context.Context) {
	for {
		var batch Purge
		select {
		case <-ctx.Done():
			return
		case x := <-p.queue:
			batch = x
		}
		timer := time.NewTimer(p.Window)
	gather:
		for {
			select {
			case x := <-p.queue:
				batch.merge(x)
			case <-timer.C:
				break gather
			case <-ctx.Done():
				timer.Stop()
				break gather
			}
		}
		if !p.send(ctx, batch) {
			p.cut = &batch
			return
		}
	}
}

// Drain sends what is queued once Run has returned, until ctx ends; what
// is left then is logged as dropped.
func (p *Purger) Drain(ctx context.Context) {
	var batch Purge
	if p.cut != nil {
		batch, p.cut = *p.cut, nil
	}
	for done := false; !done; {
		select {
		case x := <-p.queue:
			batch.merge(x)
		default:
			done = true
		}
	}
	if batch.empty() {
		return
	}
	if ctx.Err() != nil || !p.send(ctx, batch) {
		p.log.Error().Strs("tags", batch.Tags).Int("urls", len(batch.URLs)).Msg("shutting down: purge dropped")
	}
}

// send makes a batch's requests; false when ctx ended first.
func (p *Purger) send(ctx context.Context, batch Purge) bool {
	reqs, err := p.a.Requests(batch)
	if err != nil {
		p.failed.Add(1)
		p.log.Error().Err(redact.Error(err)).Msg("purge not sent")
		return true
	}
	for _, req := range reqs {
		pause := p.Backoff
		for attempt := 1; ; attempt++ {
			err := p.do(ctx, req)
			if err == nil {
				p.sent.Add(1)
				p.log.Info().Str("method", req.Method).Str("url", redact.URL(req.URL)).Strs("tags", batch.Tags).Int("attempt", attempt).Msg("purged")
				break
			}
			if ctx.Err() != nil {
				return false
			}
			if errors.Is(err, errPermanent) || attempt == p.Attempts {
				p.failed.Add(1)
				p.log.Error().Err(redact.Error(err)).Str("method", req.Method).Str("url", redact.URL(req.URL)).Int("attempt", attempt).Msg("purge failed; given up")
				break
			}
			p.log.Warn().Err(redact.Error(err)).Int("attempt", attempt).Dur("retry_in", pause).Msg("purge failed; will retry")
			select {
			case <-ctx.Done():
				return false
			case <-time.After(pause):
			}
			pause = min(2*pause, 10*time.Second)
		}
	}
	return true
}

func (p *Purger) do(ctx context.Context, req *http.Request) error {
	r := req.Clone(ctx)
	if req.GetBody != nil {
		r.Body, _ = req.GetBody()
	}
	return send(p.client, r)
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

func (v Varnish) Requests(p Purge) ([]*http.Request, error) {
	var out []*http.Request
	if len(p.Tags) > 0 {
		req, err := http.NewRequest("PURGE", v.Base.JoinPath("/").String(), nil)
		if err != nil {
			return nil, err
		}
		header := "xkey-purge"
		if v.Soft {
			header = "xkey-softpurge"
		}
		req.Header.Set(header, strings.Join(p.Tags, " "))
		out = append(out, req)
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
