package command

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"
)

// DefaultProbeURL is the admin listener's readiness check as the default
// --admin-listen serves it.
const DefaultProbeURL = "http://127.0.0.1:9090/readyz"

// probe is `wpsidecar probe [URL]`: a health check for images without a
// shell or curl (distroless). It succeeds when URL answers 200 within
// five seconds, and otherwise says what it got.
func (c *cmd) probe(ctx context.Context, args []string) error {
	url := DefaultProbeURL
	if len(args) == 1 {
		url = args[0]
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("probe: %v", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("probe: %s answered %s: %s", url, resp.Status, body)
	}
	fmt.Fprintf(c.out, "%s\n", body)
	return nil
}
