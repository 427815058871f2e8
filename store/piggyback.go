package store

import "database/sql"

// Piggyback is a read that rides along with the user lookup of the same
// request (UserForAuth's ride), in the same round trip (a second
// statement of one query): the
// sidecar's reads cost one database round trip together with
// authentication instead of two. The read still sees the database as it is
// at the request; its result is used only if authentication lets the
// request through.
type Piggyback struct {
	query string
	args  []any
	scan  func(*sql.Rows) error
	done  bool
	err   error
}

// Done reports whether the read ran, and its error.
func (p *Piggyback) Done() (bool, error) { return p.done, p.err }
