//go:build e2e

package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wpsidecar/wpsidecar/changes/delivery"
	"github.com/wpsidecar/wpsidecar/internal/harness/testwait"
	"github.com/wpsidecar/wpsidecar/internal/harness/wptest"
)

const webhookSecret = "e2e-webhook-secret"

var (
	hooks    *httptest.Server
	webhooks hookReceiver
)

// hookReceiver records the verified bodies of the sidecar's webhooks.
type hookReceiver struct {
	mu     sync.Mutex
	bodies []string
	bad    []string
}

func (h *hookReceiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	err := delivery.Verify(webhookSecret, r.Header.Get(delivery.HeaderTimestamp), r.Header.Get(delivery.HeaderSignature), body, time.Now(), time.Minute)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err != nil {
		h.bad = append(h.bad, err.Error())
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	h.bodies = append(h.bodies, string(body))
}

// waitHook waits for a webhook with exactly this body.
func waitHook(t *testing.T, want string) {
	t.Helper()
	testwait.For(t, "the webhook "+want, func() bool {
		webhooks.mu.Lock()
		found, bad := slices.Contains(webhooks.bodies, want), webhooks.bad
		webhooks.mu.Unlock()
		if len(bad) > 0 {
			t.Fatalf("webhooks that did not verify: %v", bad)
		}
		return found
	})
}

// TestWebhooks_ChangesMadeByPHP: edits made in PHP (update_option, $wpdb)
// reach the webhook receiver, signed, naming what changed.
func TestWebhooks_ChangesMadeByPHP(t *testing.T) {
	site.PHP(t, `$v = get_option('themeopts_options', array()); if (!is_array($v)) { $v = array(); }
		$v['e2e_probe'] = microtime(true); update_option('themeopts_options', $v); return true;`, nil)
	waitHook(t, `{"namespace":"themeopts","ids":["e2e_probe"]}`)

	// The sidecar creates its table on first use.
	req, _ := http.NewRequest(http.MethodGet, site.URL+"/wp-json/fieldmgr/v1/field-groups", nil)
	req.Header.Set("Authorization", wptest.BasicAuth(site.Users["administrator"].Login, site.Users["administrator"].ApplicationPassword))
	if resp, body := do(t, nil, req); resp.StatusCode != 200 {
		t.Fatalf("field groups: %d %s", resp.StatusCode, body)
	}
	site.PHP(t, `global $wpdb; $wpdb->insert($wpdb->prefix . 'fieldmgr_groups', array('group_key' => 'from_php',
		'title' => 'From PHP', 'config' => '{}', 'status' => 'active', 'created_at' => current_time('mysql'), 'updated_at' => current_time('mysql'))); return true;`, nil)
	waitHook(t, `{"namespace":"fieldmgr","keys":["from_php"]}`)
}
