// Package docs holds Herald's documentation. Its OpenAPI description,
// openapi.json, is embedded into the binary and served at
// GET /v1/openapi.json; the server's tests check every route and every
// request and answer they make against it, so it cannot drift from the code.
package docs

import _ "embed"

// OpenAPI is the OpenAPI 3.1 description of Herald's HTTP API.
//
//go:embed openapi.json
var OpenAPI []byte
