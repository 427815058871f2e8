// Package themeopts answers the themeopts/v1 REST namespace (saved theme
// options) from the options row the theme options configuration names.
package themeopts

import (
	"github.com/gorilla/mux"

	"github.com/wpsidecar/wpsidecar/auth"
)

// Service holds the namespace's dependencies.
type Service struct {
	auth *auth.Authenticator
}

// New returns the service.
func New(a *auth.Authenticator) *Service { return &Service{auth: a} }

// Name is the namespace the service answers.
func (s *Service) Name() string { return "themeopts/v1" }

// Register lists every route of the namespace. Until a route is listed
// here, its requests go to PHP.
func (s *Service) Register(r *mux.Router) {}
