package store

import "database/sql"

// Piggyback is a read that rides along with the user lookup of the same
// request (UserForAuth's ride), in the same round trip (a second
// statement of one query): the sidecar's reads cost one database round
// trip together with authentication instead of two. The read still sees
// the database as it is at the request (or, with a Memo, as the change
// feed last saw it); its result is used only if authentication lets the
// request through.
type Piggyback struct {
	kind  memoKind // what it reads, for the Memo
	key   string
	query string
	args  []any
	read  func(*sql.Rows) (any, error) // the result, never modified after
	take  func(any)                    // hands a result to the requester
	done  bool
	err   error
}

// Done reports whether the read ran, and its error.
func (p *Piggyback) Done() (bool, error) { return p.done, p.err }

// finish records the read's outcome and hands over its result.
func (p *Piggyback) finish(v any, err error) {
	p.done, p.err = true, err
	if err == nil {
		p.take(v)
	}
}
