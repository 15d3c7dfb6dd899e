package server

import (
	"bytes"
	"mime"
	"net/http"

	"github.com/agentcraftlab/agentcraft/store"
)

// inlineTypes are the upload types served for display: pictures a browser
// renders without running anything (no SVG, which can carry script).
// Everything else is served as an attachment of no particular type, so
// an uploaded HTML page can never run as this origin.
var inlineTypes = map[string]bool{"image/png": true, "image/jpeg": true, "image/gif": true, "image/webp": true}

// getUpload serves the content of one of the workspace's uploads (a chat
// attachment, a generated image) until it expires. An upload of another
// workspace is not found, as an unknown one is.
func (s *Server) getUpload(w http.ResponseWriter, r *http.Request) {
	u, err := s.opts.Knowledge.Upload(r.Context(), workspace(r), r.PathValue("id"))
	if err != nil {
		storeError(w, err)
		return
	}
	serveUpload(w, r, u)
}

func serveUpload(w http.ResponseWriter, r *http.Request, u store.Upload) {
	h := w.Header()
	ct, _, _ := mime.ParseMediaType(u.ContentType)
	disposition := "attachment"
	if inlineTypes[ct] {
		disposition = "inline"
	} else {
		ct = "application/octet-stream"
	}
	h.Set("Content-Type", ct)
	if cd := mime.FormatMediaType(disposition, map[string]string{"filename": u.Name}); cd != "" {
		h.Set("Content-Disposition", cd)
	} else {
		h.Set("Content-Disposition", disposition)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	// Opened directly, the content is a sandboxed document that may load
	// nothing.
	h.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	h.Set("Cache-Control", "private, max-age=300")
	http.ServeContent(w, r, "", u.CreatedAt, bytes.NewReader(u.Data))
}
