// Package auth decides who is calling and what they may do, exactly as
// WordPress would: application passwords over HTTP Basic, the logged-in
// cookie with a REST nonce, optionally Basic with the account password, and
// capabilities from roles and per-user grants. It reads users, user meta
// and options through store and knows nothing of routing.
package auth
