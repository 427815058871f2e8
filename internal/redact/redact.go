// Package redact masks what must not be printed: the one home of the
// masking every URL the sidecar prints or logs goes through (the settings
// printout, the webhooks' and purges' logs, the server's start line). It
// imports no project package, so that config and changes both may.
package redact

import (
	"errors"
	"net/url"
)

// URL is u fit to print. A password in it, the values of its query
// (where receivers often take a token) and its fragment are masked.
func URL(u *url.URL) string {
	if u == nil {
		return ""
	}
	r := *u
	if r.RawQuery != "" {
		q, err := url.ParseQuery(r.RawQuery)
		if err != nil {
			q = url.Values{"(query)": nil}
		}
		for k := range q {
			q[k] = []string{"xxxxx"}
		}
		r.RawQuery = q.Encode()
	}
	if r.Fragment != "" || r.RawFragment != "" {
		r.Fragment, r.RawFragment = "xxxxx", ""
	}
	return r.Redacted()
}

// Error is err with the URL of an HTTP client's error (which Go prints
// whole: "Post \"https://…?token=…\": …") masked as URL does.
func Error(err error) error {
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	masked := *ue
	if u, perr := url.Parse(ue.URL); perr == nil {
		masked.URL = URL(u)
	} else {
		masked.URL = "(a URL)"
	}
	return &masked
}
