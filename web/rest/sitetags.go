package rest

import (
	"net/http"

	"github.com/wpsidecar/wpsidecar/domain/cachetag"
)

// siteTags has every answer's cache tags name the site (prefix, on a
// network), so that a purge of one site's tags never reaches another's
// answers; nil without a prefix.
func siteTags(prefix string) func(http.Header) {
	if prefix == "" {
		return nil
	}
	return func(h http.Header) { cachetag.Prefix(h, prefix) }
}
