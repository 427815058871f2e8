// Package fieldmgr answers the fieldmgr/v1 REST namespace (field group
// definitions) from the field-group table.
package fieldmgr

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
func (s *Service) Name() string { return "fieldmgr/v1" }

// Register lists every route of the namespace. Until a route is listed
// here, its requests go to PHP.
func (s *Service) Register(r *mux.Router) {}
