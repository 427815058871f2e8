package auth

import (
	"context"
	"crypto/rand"
	"strings"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/wpsidecar/wpsidecar/store"
)

// A successful account-password login rewrites an outdated hash, as
// wp_authenticate does on the site's WordPress:
//
//   - 6.8 and later: wp_authenticate_username_password (and its e-mail
//     twin) end with `if wp_password_needs_rehash(user_pass) then
//     wp_set_password(password)`. With the default algorithm (bcrypt),
//     every hash without the $wp prefix needs it — md5, $P$, plain bcrypt,
//     SHA-crypt — and is rewritten as $wp + bcrypt(pre-hash), cost 10.
//   - 6.1: wp_check_password, given the user's ID as the login passes it,
//     rewrites an md5 hash (and only that) as phpass $P$B.
//
// db_version tells which (see Version), and each choice is safe when it is
// wrong about the files: a pre-6.8 database only ever gets phpass, which
// every version reads (writing $wp there would lock a real 6.1 site's user
// out of wp-login.php); a 6.8 database is run by 6.8+ files.
//
// What the sidecar leaves as it is, though the default 6.8 rule would not:
//   - argon2 hashes. WordPress writes them only when a
//     wp_hash_password_algorithm filter chooses argon2, and then
//     wp_password_needs_rehash is false for them; the sidecar cannot see
//     the filter, and converting them to bcrypt would fight it (PHP would
//     convert them back at the next login, and every conversion ends the
//     user's cookies).
//   - $wp hashes of another bcrypt cost. PHP's default cost is 10 up to
//     8.3 and 12 from 8.4, and a wp_hash_password_options filter may set
//     another; the sidecar knows neither, so it rewrites formats, never
//     costs.
//   - A password over 4096 bytes matched against md5: WordPress would
//     write '*' (wp_hash_password's answer to a long password), locking
//     the account.
//
// wp_set_password also empties user_activation_key, and clears the user's
// object cache; SetUserPass does both, and writes only while user_pass is
// still the hash the login checked. Like WordPress's, the rewrite changes
// pass_frag (cookie.go), so the user's existing cookies stop working: a
// rehash logs the user out everywhere else. wordpress-develop's trunk (a
// 7.0-era pluggable.php) also empties the user's session_tokens in
// wp_set_password (WP_Session_Tokens::destroy_all); 6.8's, as the code
// reference publishes it, does not, and neither does the sidecar, which
// cannot tell the two apart by db_version — the cookies end all the same,
// only the dead sessions stay listed until they expire.

// needsRehash tells whether a login with a password of pwLen bytes that
// matched stored rewrites it, under version v.
func needsRehash(stored string, pwLen int, v Version) bool {
	if pwLen > maxPasswordBytes {
		return false
	}
	if v == WP61 {
		return len(stored) <= 32
	}
	return !strings.HasPrefix(stored, "$wp") && !strings.HasPrefix(stored, "$argon2")
}

// hashPassword is wp_hash_password of version v: 6.8's $wp$2y$10$ bcrypt
// of the pre-hash, or 6.1's phpass $P$B (2^13 MD5 rounds). Both hash the
// password trimmed as PHP's trim() does.
func hashPassword(password string, v Version) (string, error) {
	password = phpTrim(password)
	if v == WP68 {
		h, err := bcrypt.GenerateFromPassword([]byte(wpPrehash(password)), wpBcryptCost)
		if err != nil {
			return "", err
		}
		// x/crypto writes the $2a$ minor; PHP writes $2y$ for the same
		// (correct) algorithm, and 6.8's pass_frag rule names $2y$.
		return "$wp$2y$" + string(h[len("$2a$"):]), nil
	}
	salt := make([]byte, 6)
	rand.Read(salt)
	h, _ := phpassCrypt(checker{ctx: context.Background()}, password, "$P$B"+encode64(salt)+strings.Repeat(".", 22))
	return h, nil
}

// wpBcryptCost is wp_hash_password's bcrypt cost: PHP's default up to 8.3.
const wpBcryptCost = 10

// phpTrim is PHP's trim(): spaces, tabs, newlines, carriage returns, NUL
// and vertical tabs from both ends.
func phpTrim(s string) string { return strings.Trim(s, " \t\n\r\x00\x0b") }

// rehash rewrites u's hash after its account password matched, when the
// version's rule says so (see above). It runs in the background, off the
// request's path: the answer does not depend on it (the password matched
// the hash as it is), and SetUserPass writes only over the hash checked,
// so a request that raced it, or a password changed meanwhile, is left
// alone. One rewrite is started per user and old hash (while the bounded
// set remembers it): the requests that read the old hash before the write
// landed start none, nor do the logins after a write that failed (the
// next login through PHP rehashes). Wait waits for it. password is the
// one checked (trimmed as wp_authenticate trims).
func (a *Authenticator) rehash(ctx context.Context, u *store.User, password string, v Version) {
	if !needsRehash(u.Pass, len(password), v) {
		return
	}
	if !a.rehashed.add(u.ID, a.rehashed.key("rehash", u.ID, "", u.Pass)) {
		return
	}
	a.background.Add(1)
	go func() {
		defer a.background.Done()
		hash, err := hashPassword(password, v)
		if err != nil {
			a.o.Log.Warn().Err(err).Int64("user_id", u.ID).Msg("could not rehash the password")
			return
		}
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		wrote, err := a.o.Store.SetUserPass(ctx, u.ID, u.Pass, hash)
		if err != nil {
			a.o.Log.Warn().Err(err).Int64("user_id", u.ID).Msg("could not store the rehashed password")
			return
		}
		if wrote {
			// The next request's check of the new hash needs no bcrypt.
			a.checks.add(u.ID, a.checks.key("pw", u.ID, password, hash))
		}
	}()
}
