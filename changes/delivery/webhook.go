package delivery

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
	"github.com/wpsidecar/wpsidecar/internal/redact"
)

// Webhook headers. The signature is HMAC-SHA256, keyed with the shared
// secret, over the timestamp, a dot and the body, as "sha256=<hex>".
const (
	HeaderTimestamp = "X-Wpsidecar-Timestamp"
	HeaderSignature = "X-Wpsidecar-Signature"
	HeaderDelivery  = "X-Wpsidecar-Delivery"
)

// NotifierOptions configures a Notifier.
type NotifierOptions struct {
	URLs   []*url.URL
	Secret string
	// QueueSize bounds the changes waiting per URL (default 256); when a
	// queue is full the newest change is dropped and logged.
	QueueSize int
	// Attempts per delivery (default 8) and the first pause between them
	// (default 1 s), doubling up to MaxBackoff (default 1 min).
	Attempts   int
	Backoff    time.Duration
	MaxBackoff time.Duration
	Timeout    time.Duration // per attempt (default 10 s)
	// Units name what a commit's items are called in its body (Commit).
	Units wpsidecar.Units
	Log   zerolog.Logger
}

// Notifier delivers changes to every URL, each URL in its own goroutine
// and queue, so that a slow or dead receiver delays only itself and never
// a request: Notify only enqueues.
type Notifier struct {
	o      NotifierOptions
	client *http.Client
	queues []chan delivery
	// cut are the deliveries Run was making when it was stopped, per URL,
	// for Drain to finish first.
	cut []*delivery
}

type delivery struct {
	id   string
	body []byte
}

// NewNotifier returns a notifier; Run delivers.
func NewNotifier(o NotifierOptions) *Notifier {
	if o.QueueSize <= 0 {
		o.QueueSize = 256
	}
	if o.Attempts <= 0 {
		o.Attempts = 8
	}
	if o.Backoff <= 0 {
		o.Backoff = time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = time.Minute
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Second
	}
	n := &Notifier{o: o, client: &http.Client{Timeout: o.Timeout}, cut: make([]*delivery, len(o.URLs))}
	for range o.URLs {
		n.queues = append(n.queues, make(chan delivery, o.QueueSize))
	}
	return n
}

// Touched is nothing to deliver.
func (n *Notifier) Touched(wpsidecar.Touched) {}

// Commit queues c's webhook (WebhookJSON, its items named as its unit
// says; "keys" for a namespace not among them) for every URL without
// waiting.
func (n *Notifier) Commit(c wpsidecar.Commit) {
	field := "keys"
	if u := n.o.Units.Find(c.Namespace); u != nil {
		field = u.ItemsField()
	}
	n.Send(WebhookJSON(c, field))
}

// Send queues a JSON body for every URL without waiting.
func (n *Notifier) Send(body []byte) {
	d := delivery{id: randomID(), body: body}
	for i, q := range n.queues {
		select {
		case q <- d:
		default:
			n.o.Log.Error().Str("url", redact.URL(n.o.URLs[i])).Str("delivery", d.id).RawJSON("change", d.body).
				Msg("webhook queue full; change dropped")
		}
	}
}

// Run delivers until ctx ends.
func (n *Notifier) Run(ctx context.Context) {
	done := make(chan struct{})
	for i := range n.queues {
		go func() {
			defer func() { done <- struct{}{} }()
			for {
				select {
				case <-ctx.Done():
					return
				case d := <-n.queues[i]:
					if !n.deliver(ctx, n.o.URLs[i], d) {
						n.cut[i] = &d
						return
					}
				}
			}
		}()
	}
	for range n.queues {
		<-done
	}
}

// Drain delivers what is still queued once Run has returned, each URL's
// queue in order, until ctx ends; what is left then is logged as dropped.
func (n *Notifier) Drain(ctx context.Context) {
	done := make(chan struct{})
	for i, q := range n.queues {
		go func() {
			defer func() { done <- struct{}{} }()
			next := func() (delivery, bool) {
				if d := n.cut[i]; d != nil {
					n.cut[i] = nil
					return *d, true
				}
				select {
				case d := <-q:
					return d, true
				default:
					return delivery{}, false
				}
			}
			for d, ok := next(); ok; d, ok = next() {
				if ctx.Err() != nil || !n.deliver(ctx, n.o.URLs[i], d) {
					n.o.Log.Error().Str("url", redact.URL(n.o.URLs[i])).Str("delivery", d.id).RawJSON("change", d.body).
						Msg("shutting down: queued delivery dropped")
				}
			}
		}()
	}
	for range n.queues {
		<-done
	}
}

// errPermanent: the receiver refused the delivery for good (a 4xx other
// than 408 and 429); retrying would not help.
var errPermanent = errors.New("refused")

// deliver makes d's attempts; false when ctx ended first (d is not done).
func (n *Notifier) deliver(ctx context.Context, u *url.URL, d delivery) bool {
	log := n.o.Log.With().Str("url", redact.URL(u)).Str("delivery", d.id).Logger()
	pause := n.o.Backoff
	for attempt := 1; ; attempt++ {
		err := n.post(ctx, u, d)
		switch {
		case err == nil:
			log.Info().Int("attempt", attempt).Msg("webhook delivered")
			return true
		case ctx.Err() != nil:
			return false
		case errors.Is(err, errPermanent) || attempt == n.o.Attempts:
			log.Error().Err(redact.Error(err)).Int("attempt", attempt).RawJSON("change", d.body).Msg("webhook not delivered; given up")
			return true
		}
		log.Warn().Err(redact.Error(err)).Int("attempt", attempt).Dur("retry_in", pause).Msg("webhook failed; will retry")
		select {
		case <-ctx.Done():
			return false
		case <-time.After(pause):
		}
		pause = min(2*pause, n.o.MaxBackoff)
	}
}

func (n *Notifier) post(ctx context.Context, u *url.URL, d delivery) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(d.body))
	if err != nil {
		return fmt.Errorf("%w: %v", errPermanent, err)
	}
	ts := time.Now().Unix()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "wpsidecar-webhook")
	req.Header.Set(HeaderDelivery, d.id)
	req.Header.Set(HeaderTimestamp, strconv.FormatInt(ts, 10))
	req.Header.Set(HeaderSignature, Sign(n.o.Secret, ts, d.body))
	return send(n.client, req)
}

// send makes one attempt: nil on a 2xx, errPermanent on a 4xx other than
// 408 and 429 (retrying would not help), another error otherwise.
func send(c *http.Client, req *http.Request) error {
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return nil
	case resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests:
		return refusal{resp.StatusCode, resp.Status}
	}
	return errors.New(resp.Status)
}

// refusal is a receiver's 4xx: errPermanent, with its status.
type refusal struct {
	code   int
	status string
}

func (r refusal) Error() string { return errPermanent.Error() + ": " + r.status }
func (r refusal) Unwrap() error { return errPermanent }

// Sign is the signature header's value for body sent at timestamp.
func Sign(secret string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(strconv.FormatInt(timestamp, 10) + "."))
	m.Write(body)
	return "sha256=" + hex.EncodeToString(m.Sum(nil))
}

// Verify is what a receiver does: the signature must match the timestamp
// and body, and the timestamp be within tolerance of now (replays of old
// deliveries are refused).
func Verify(secret, timestamp, signature string, body []byte, now time.Time, tolerance time.Duration) error {
	ts, err := strconv.ParseInt(timestamp, 10, 64)
	if err != nil {
		return errors.New("webhook: bad timestamp")
	}
	if d := now.Sub(time.Unix(ts, 0)); d > tolerance || d < -tolerance {
		return errors.New("webhook: timestamp outside the tolerance")
	}
	if !hmac.Equal([]byte(signature), []byte(Sign(secret, ts, body))) {
		return errors.New("webhook: signature does not match")
	}
	return nil
}

func randomID() string {
	b := make([]byte, 12)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// WebhookJSON is a commit as a webhook's body, its items listed under
// field: {"namespace":"fieldmgr","keys":[…]} or
// {"namespace":"themeopts","ids":[…]}; on a network, with "site": the
// blog id.
func WebhookJSON(c wpsidecar.Commit, field string) []byte {
	set := phpserial.Value{Kind: phpserial.Array}
	for i, k := range c.DistinctKeys() {
		set.Entries = append(set.Entries, phpserial.Entry{Key: phpserial.IntKey(int64(i)), Value: phpserial.Value{Kind: phpserial.String, Str: k}})
	}
	var b strings.Builder
	b.WriteString(`{"namespace":`)
	b.Write(phpserial.JSON(phpserial.Value{Kind: phpserial.String, Str: string(c.Namespace)}))
	b.WriteString(`,"` + field + `":`)
	b.Write(phpserial.JSON(set))
	if c.BlogID > 0 {
		b.WriteString(`,"site":` + strconv.FormatInt(c.BlogID, 10))
	}
	b.WriteString(`}`)
	return []byte(b.String())
}
