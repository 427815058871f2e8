// Package routetable holds a namespace's route table as its handler
// package lists it: the paths, each method's handler and what it
// documents. It links no router, so that what only reads the tables (the
// OpenAPI description) does not either; wpjson.Register mounts them.
package routetable

import "net/http"

// Route is one REST route: its path inside the namespace and its handlers
// in WordPress's registration order.
type Route struct {
	// Name names the route for the namespace's own middleware (the
	// router's name of the route it matched); optional.
	Name     string
	Path     string
	Handlers []MethodHandler
	// When, if set, must hold for the route to exist on a request; when it
	// does not, the request goes on to whatever else matches (PHP).
	When func() bool
}

// Handler handles a request and returns its failure instead of writing
// it (wpjson.HandlerFunc renders it).
type Handler func(w http.ResponseWriter, r *http.Request) error

// MethodHandler handles one method of a route.
type MethodHandler struct {
	Method string
	Fn     Handler
	Doc    Operation
	// Prepared: the answer depends on nothing but the request and what
	// the change feed vouches for (Keep.Allow), so that it may be kept
	// and given again (package rest's prepared answers). A route that
	// reads anything else (a table the memo does not keep, the clock)
	// leaves it false.
	Prepared bool
}

// Operation documents a method of a route for the OpenAPI description
// (package openapi): what it does, what it takes, what it answers.
type Operation struct {
	ID, Summary, Description string
	// Body and Answer name the schemas (components/schemas) of the JSON
	// request body ("" for none) and of the success answer.
	Body, Answer string
	// BodyOptional: the body may be left out (a query parameter gives
	// the same).
	BodyOptional bool
	Status       int // the success status; 0 is 200
	// Errors are the answers of this operation's own, besides those every
	// operation may give (authentication, throttling, the database).
	Errors []ErrorDoc
	// Read: answers carry ETag (If-None-Match → 304) and cache tags.
	// Write: If-Match is honoured (412).
	Read, Write bool
	// Query are the operation's own query parameters; Paginated answers
	// carry X-WP-Total and X-WP-TotalPages.
	Query     []ParamDoc
	Paginated bool
}

// ParamDoc is a query parameter: its name, JSON Schema type ("string",
// "integer", "boolean"), and what it does.
type ParamDoc struct {
	Name, Type, Description string
}

// ErrorDoc is an error answer an operation gives: its status and code, or
// Bare for the namespace's own {"error": message} shape.
type ErrorDoc struct {
	Status int
	Code   string
	Bare   bool
}
