package server

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/heraldhq/herald/docs"
)

// handleOpenAPI is GET /v1/openapi.json: the API's OpenAPI 3.1 description.
func (s *Server) handleOpenAPI(w http.ResponseWriter, _ *http.Request, _ httprouter.Params) error {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(docs.OpenAPI)
	return err
}
