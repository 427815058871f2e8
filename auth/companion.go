package auth

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/wpsidecar/wpsidecar/wire/wpjson"
)

// Policy is what the companion plugin (wordpress/wpsidecar-companion.php)
// publishes of PHP's authentication decisions, which filters and plugins
// make and the sidecar cannot compute. Without the plugin it is empty and
// denies nothing.
type Policy struct {
	// AppPasswordsAvailable is wp_is_application_passwords_available's
	// filters; nil when not published.
	AppPasswordsAvailable *bool `json:"application_passwords_available"`
	// UnavailableFor lists users whose application passwords the
	// wp_is_application_passwords_available_for_user filter refuses.
	UnavailableFor []int64 `json:"application_passwords_unavailable_for"`
	// AnonymousError is what rest_authentication_errors answers an
	// anonymous request (a site closed to visitors), or nil.
	AnonymousError *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Status  int    `json:"status"`
	} `json:"anonymous_rest_error"`
}

// parsePolicy reads the option's JSON; "" is the empty policy.
func parsePolicy(raw string) (Policy, error) {
	var p Policy
	if raw == "" {
		return p, nil
	}
	err := json.Unmarshal([]byte(raw), &p)
	return p, err
}

func (p Policy) appPasswords() bool {
	return p.AppPasswordsAvailable == nil || *p.AppPasswordsAvailable
}

func (p Policy) appPasswordsFor(userID int64) bool {
	return !slices.Contains(p.UnavailableFor, userID)
}

// anonymous is the failure an anonymous request gets, or nil.
func (p Policy) anonymous() *wpjson.Error {
	e := p.AnonymousError
	if e == nil || e.Code == "" {
		return nil
	}
	status := e.Status
	if status < 400 || status > 599 {
		status = http.StatusUnauthorized
	}
	return &wpjson.Error{Code: e.Code, Message: e.Message, Status: status}
}

// errAppPWsDisabledForUser is WordPress's answer when a filter refuses a
// user's application passwords.
var errAppPWsDisabledForUser = &wpjson.Error{Code: "application_passwords_disabled_for_user",
	Message: "Application Passwords are not available for your account. Please contact the site administrator for assistance."}

// FailedAttempt is a failed Basic authentication, as the companion plugin
// takes it to fire WordPress's actions for lockout plugins.
type FailedAttempt struct {
	Login   string `json:"login"`
	IP      string `json:"ip"`
	Kind    string `json:"kind"` // "application_password" or "password"
	Code    string `json:"code"`
	Message string `json:"message"`
}
