package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/wpsidecar/wpsidecar"
	"github.com/wpsidecar/wpsidecar/domain/wplogin"
	"github.com/wpsidecar/wpsidecar/internal/phpserial"
)

// User is a wp_users row with the user meta authentication needs, read in
// one query.
type User struct {
	ID      int64
	Login   string
	Email   string
	Pass    string            // user_pass: the password hash
	Meta    map[string]string // meta_key → meta_value of the lowest umeta_id
	Matched string            // "login" or "email": what the lookup matched
}

// Meta keys authentication reads.
const (
	MetaSessionTokens        = "session_tokens"
	MetaApplicationPasswords = "_application_passwords"
)

// CapabilitiesKey is the {blog_prefix}capabilities meta key.
func (db *DB) CapabilitiesKey() string { return db.prefix + "capabilities" }

// foldASCII lowercases ASCII text, which the columns' collation compares
// without case (so "Admin" and "admin" find the same user and share a memo
// entry); other text is kept as it is.
func foldASCII(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// UserForAuth finds a user by login (sanitized as WordPress does; the
// collation makes it case-insensitive) or, when byEmail and no login
// matches, by e-mail address, with the meta values named by metaKeys: one
// database round trip, which also carries ride (when not nil and not run
// yet). A user that does not exist is wpsidecar.ErrNotFound. With a Memo, either or
// both may come from it; the User is shared and must not be modified.
func (db *DB) UserForAuth(ctx context.Context, login string, byEmail bool, ride *Piggyback, metaKeys ...string) (*User, error) {
	login = strings.TrimSpace(login)
	clean := wplogin.Sanitize(login)
	email := ""
	if byEmail {
		email = login
	}
	if clean == "" && email == "" {
		return nil, wpsidecar.ErrNotFound
	}
	if ride != nil && !ride.done {
		if v, ok, _, _ := db.memo.lookup(ctx, memoKey{ride.kind, ride.key}); ok {
			ride.finish(v, nil)
		}
	}
	key := memoKey{kindUser, foldASCII(clean) + "\x00" + foldASCII(email) + "\x00" + strings.Join(metaKeys, "\x00")}
	kept, ok, gen, serving := db.memo.lookup(ctx, key)
	if ok {
		if ride != nil && !ride.done {
			// Authentication needs no round trip; the ride gets its own.
			if err := db.readAlone(ctx, ride); err != nil {
				ride.done, ride.err = true, err
			}
		}
		return kept.(*User), nil
	}
	// No ORDER BY: sorting a join makes MariaDB build a temporary table on
	// every request. The rows are few; the choices are made here.
	args := []any{clean}
	q := "SELECT u.ID, u.user_login, u.user_email, u.user_pass, u.user_login = ?, m.umeta_id, m.meta_key, m.meta_value FROM " +
		db.Table("users") + " u LEFT JOIN " + db.Table("usermeta") + " m ON m.user_id = u.ID"
	if len(metaKeys) > 0 {
		q += " AND m.meta_key IN (?" + strings.Repeat(",?", len(metaKeys)-1) + ")"
		for _, k := range metaKeys {
			args = append(args, k)
		}
	} else {
		q += " AND 1 = 0"
	}
	q += " WHERE u.user_login = ?"
	args = append(args, clean)
	if email != "" {
		q += " OR u.user_email = ?"
		args = append(args, email)
	}

	pb := ride
	if pb != nil && !pb.done && db.piggyback {
		q += "; " + pb.query
		args = append(args, pb.args...)
	} else {
		pb = nil
	}
	// A GTID to read after (read-your-writes) makes a replica wait, or the
	// primary answer: only a lookup that carries a route's read — whose
	// credentials authenticated before — is worth that; an unproven one
	// reads as any other.
	done, err := db.turn(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	rows, err := db.query(ctx, db.pick(ctx, serving, ride != nil), q, args...)
	if unrepresentable(err) {
		// A login the connection charset cannot hold equals no stored one;
		// wpdb's lookup fails the same way and WordPress answers "unknown".
		return nil, wpsidecar.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: user: %w", classify(err))
	}
	defer rows.Close()
	defer func() {
		if pb == nil {
			return
		}
		// The user's rows are read; the next result set is the ride-along.
		var v any
		var err error
		if rows.NextResultSet() {
			v, err = pb.read(rows)
		} else if err = rows.Err(); err == nil {
			err = fmt.Errorf("store: the piggybacked read returned no result")
		}
		if err != nil {
			err = classify(err)
		} else if serving {
			db.memo.put(memoKey{pb.kind, pb.key}, gen, v)
		}
		pb.finish(v, err)
	}()
	var u *User
	metaIDs := map[string]int64{}
	for rows.Next() {
		var (
			id                    int64
			ulogin, uemail, upass string
			byLogin               bool
			umetaID               sql.NullInt64
			metaKey, metaValue    sql.NullString
		)
		if err := rows.Scan(&id, &ulogin, &uemail, &upass, &byLogin, &umetaID, &metaKey, &metaValue); err != nil {
			return nil, fmt.Errorf("store: user: %w", classify(err))
		}
		// The login match wins over an e-mail match, then the lowest ID.
		better := u == nil || (byLogin && u.Matched != "login") || (byLogin == (u.Matched == "login") && id < u.ID)
		if better {
			u = &User{ID: id, Login: ulogin, Email: uemail, Pass: upass, Meta: map[string]string{}, Matched: "email"}
			if byLogin {
				u.Matched = "login"
			}
			clear(metaIDs)
		}
		if id != u.ID || !metaKey.Valid {
			continue
		}
		// "Single" meta reads take the lowest umeta_id.
		if old, seen := metaIDs[metaKey.String]; !seen || umetaID.Int64 < old {
			u.Meta[metaKey.String] = metaValue.String
			metaIDs[metaKey.String] = umetaID.Int64
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: user: %w", classify(err))
	}
	if u == nil {
		return nil, wpsidecar.ErrNotFound
	}
	if serving {
		db.memo.put(key, gen, u)
	}
	return u, nil
}

// TouchApplicationPassword records a use of the application password uuid
// by WordPress's rule: only when its last_used is a day old or older, then
// last_used = now and last_ip = ip. It locks the meta row and rewrites it
// from its current value, so a change made meanwhile (a revocation, another
// item's use) is kept. It reports whether it wrote.
func (db *DB) TouchApplicationPassword(ctx context.Context, userID int64, uuid, ip string, now time.Time) (bool, error) {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return false, fmt.Errorf("store: %w", classify(err))
	}
	defer tx.Rollback()
	var id int64
	var raw string
	err = tx.QueryRowContext(ctx, "SELECT umeta_id, meta_value FROM "+db.Table("usermeta")+
		" WHERE user_id = ? AND meta_key = ? ORDER BY umeta_id LIMIT 1 FOR UPDATE", userID, MetaApplicationPasswords).Scan(&id, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("store: application passwords: %w", classify(err))
	}
	v, err := phpserial.Unserialize(raw)
	if err != nil || v.Kind != phpserial.Array {
		return false, nil // not ours to repair
	}
	changed := false
	for i, item := range v.Entries {
		u, _ := item.Value.Get("uuid")
		if u.Str != uuid {
			continue
		}
		last, _ := item.Value.Get("last_used")
		lastUsed, _ := last.AsInt()
		if lastUsed+86400 > now.Unix() {
			return false, nil
		}
		item.Value = setEntry(item.Value, "last_used", phpserial.Value{Kind: phpserial.Int, Int: now.Unix()})
		item.Value = setEntry(item.Value, "last_ip", phpserial.Value{Kind: phpserial.String, Str: ip})
		v.Entries[i] = item
		changed = true
		break
	}
	if !changed {
		return false, nil
	}
	if _, err := tx.ExecContext(ctx, "UPDATE "+db.Table("usermeta")+" SET meta_value = ? WHERE umeta_id = ?", phpserial.Serialize(v), id); err != nil {
		return false, fmt.Errorf("store: application passwords: %w", classify(err))
	}
	if err := tx.Commit(); err != nil {
		return false, fmt.Errorf("store: application passwords: %w", classify(err))
	}
	db.memo.Forget(Changed{Users: true})
	if db.cache != nil {
		db.cache.UserMetaChanged(ctx, userID)
	}
	return true, nil
}

// setEntry replaces the value under a string key, or appends it.
func setEntry(v phpserial.Value, key string, val phpserial.Value) phpserial.Value {
	k := phpserial.StrKey(key)
	entries := append([]phpserial.Entry(nil), v.Entries...)
	for i := range entries {
		if entries[i].Key == k {
			entries[i].Value = val
			v.Entries = entries
			return v
		}
	}
	v.Entries = append(entries, phpserial.Entry{Key: k, Value: val})
	return v
}

// SetUserPass writes what wp_set_password writes — user_pass = hash, and
// user_activation_key emptied (a password-reset link sent before stops
// working) — for user id, but only while user_pass is still old, compared
// byte for byte (the column's collation would ignore case and trailing
// spaces), so that a password changed meanwhile, by PHP or by another
// request, is never overwritten. It reports whether it wrote; then the
// memo forgets users and the object cache drops the row, as after the
// sidecar's other user writes.
//
// wp_set_password also runs the wp_set_password action and, in
// wordpress-develop's trunk, WP_Session_Tokens::destroy_all; neither
// happens here (the sessions' cookies end anyway: they carry a fragment of
// the old hash).
func (db *DB) SetUserPass(ctx context.Context, id int64, old, hash string) (bool, error) {
	res, err := db.sql.ExecContext(ctx, "UPDATE "+db.Table("users")+" SET user_pass = ?, user_activation_key = '' WHERE ID = ? AND CAST(user_pass AS BINARY) = CAST(? AS BINARY)",
		hash, id, old)
	if err != nil {
		return false, fmt.Errorf("store: user_pass: %w", classify(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: user_pass: %w", classify(err))
	}
	if n == 0 {
		return false, nil
	}
	db.memo.Forget(Changed{Users: true})
	if db.cache != nil {
		db.cache.UserChanged(ctx, id)
	}
	return true, nil
}
