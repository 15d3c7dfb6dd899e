package tool

import (
	"fmt"
	"net/http"
)

// RegisterBuiltins registers the built-in tools every deployment has had:
// calculator and current_time. It fails if one of their names is already
// taken. RegisterBuiltinsWith registers the full catalog.
func RegisterBuiltins(r *Registry) error {
	return register(r, Calculator{}, CurrentTime{})
}

// BuiltinOptions configure the built-in tools that need the server's
// configuration. The zero value registers only the tools that need none.
type BuiltinOptions struct {
	// FilesDir is the sandbox directory of file_read and file_list, and
	// where ocr_image's "path" points. Empty: the file tools are not
	// registered and ocr_image takes base64 images only.
	FilesDir string
	// Files configures the file tools; nil means defaults.
	Files *FileOptions
	// HTTPClient sends http_request's requests: pass the egress-policy
	// client (egress.Guard.Client), never http.DefaultClient. Nil: the
	// http_request tool is not registered.
	HTTPClient *http.Client
	// HTTP configures http_request; nil means defaults.
	HTTP *HTTPOptions
}

// RegisterBuiltinsWith registers the built-in catalog: calculator,
// current_time, json_query, run_javascript, run_starlark and ocr_image
// always (ocr_image says plainly when tesseract is not installed);
// file_read and file_list when opts.FilesDir is set; http_request when
// opts.HTTPClient is set.
// opts nil means the zero BuiltinOptions. It fails if a name is taken or
// the configuration is unusable (a FilesDir that is not a directory).
func RegisterBuiltinsWith(r *Registry, opts *BuiltinOptions) error {
	var o BuiltinOptions
	if opts != nil {
		o = *opts
	}
	tools := []Tool{Calculator{}, CurrentTime{}, JSONQuery{}, RunJavaScript{}, RunStarlark{}}
	ocr := OCRImage{}
	if o.FilesDir != "" {
		files, err := NewFileTools(o.FilesDir, o.Files)
		if err != nil {
			return fmt.Errorf("tool: register built-ins: %w", err)
		}
		tools = append(tools, files.Tools()...)
		ocr.Files = files
	}
	tools = append(tools, ocr)
	if o.HTTPClient != nil {
		h, err := NewHTTPRequest(o.HTTPClient, o.HTTP)
		if err != nil {
			return fmt.Errorf("tool: register built-ins: %w", err)
		}
		tools = append(tools, h)
	}
	return register(r, tools...)
}

func register(r *Registry, tools ...Tool) error {
	for _, t := range tools {
		if err := r.Register(t); err != nil {
			return fmt.Errorf("tool: register built-ins: %w", err)
		}
	}
	return nil
}
