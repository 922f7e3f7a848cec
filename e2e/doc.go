// Package e2e holds Herald's whole-binary tests: they build the herald
// command as it ships and run it as a process (killed mid-work, restarted,
// run twice on one PostgreSQL database, behind nginx and Caddy, against
// Pebble), and hold the README's quick start and the release files to what
// the binary does. The fast tests of the commands live in package cli.
package e2e
