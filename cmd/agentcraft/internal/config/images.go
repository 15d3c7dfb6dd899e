package config

import (
	"log/slog"
	"net/url"
	"strings"
	"time"
)

// Image back ends of tools.images.backend.
const (
	ImagesOpenAI  = "openai"
	ImagesComfyUI = "comfyui"
)

// Images configures the image back end of the generate_image tool and of
// workflow image nodes. Without a backend neither is available (image
// nodes fail naming tools.images). Pictures are kept as uploads of the
// caller's workspace and served by GET /api/uploads/{id}.
type Images struct {
	// Backend is "openai" (the OpenAI images API, or any server speaking
	// it) or "comfyui" (a ComfyUI server running Workflow). Empty (the
	// default): no image generation.
	Backend string `yaml:"backend"`
	// BaseURL is where the back end is. openai: the API root with /v1,
	// default https://api.openai.com/v1 (LocalAI:
	// http://127.0.0.1:8080/v1); comfyui: the server, required, such as
	// http://127.0.0.1:8188. Its host:port is reachable even when it is
	// loopback or private — the operator chose it here, no workflow
	// author can — while every other host (a url an answer points to)
	// follows egress.allow.
	BaseURL string `yaml:"base_url"`
	// APIKey is sent as a Bearer token: "${OPENAI_API_KEY}" for OpenAI;
	// for ComfyUI (which has no auth) only behind an authenticating
	// proxy. Default none.
	APIKey string `yaml:"api_key"`
	// Model is the image model (openai only). Default gpt-image-1.
	Model string `yaml:"model"`
	// Workflow is the ComfyUI workflow (comfyui only, required): the path
	// of a graph exported with "Export (API)", relative to this file, or
	// the JSON itself (a value starting with "{"). Its string inputs
	// carry placeholders — {{prompt}} (required), {{negative_prompt}},
	// {{seed}}, {{width}}, {{height}}, {{batch_size}} — that each call
	// fills in; a whole-value placeholder takes the value's type
	// ("seed": "{{seed}}" becomes a number).
	Workflow string `yaml:"workflow"`
	// Timeout bounds one generation, drawing and fetching included.
	// Default 5m.
	Timeout time.Duration `yaml:"timeout"`
	// PollInterval is how often a ComfyUI prompt's history is polled
	// (comfyui only). Default 1s.
	PollInterval time.Duration `yaml:"poll_interval"`
	// Keep is how long generated pictures stay as uploads before they
	// expire. Default 168h (a week).
	Keep time.Duration `yaml:"keep"`
}

// DefaultImagesKeep is the default of Images.Keep.
const DefaultImagesKeep = 7 * 24 * time.Hour

// LogValue implements slog.LogValuer with the key redacted.
func (i Images) LogValue() slog.Value {
	key := ""
	if i.APIKey != "" {
		key = "[redacted]"
	}
	return slog.GroupValue(slog.String("backend", i.Backend), slog.String("base_url", i.BaseURL), slog.String("api_key", key), slog.String("model", i.Model))
}

// InlineWorkflow reports whether Workflow holds the graph itself rather
// than a path.
func (i Images) InlineWorkflow() bool { return strings.HasPrefix(strings.TrimSpace(i.Workflow), "{") }

// validateImages reports the problems of tools.images.
func (c *Config) validateImages(bad func(path, format string, args ...any)) {
	im := c.Tools.Images
	const at = "tools.images"
	switch im.Backend {
	case "":
		if im != (Images{}) {
			bad(at+".backend", "is empty: set it to %s or %s, or remove tools.images", ImagesOpenAI, ImagesComfyUI)
		}
		return
	case ImagesOpenAI:
		if im.Workflow != "" {
			bad(at+".workflow", "is for the comfyui back end; the openai one takes a model")
		}
		if im.PollInterval != 0 {
			bad(at+".poll_interval", "is for the comfyui back end: remove it")
		}
	case ImagesComfyUI:
		if im.BaseURL == "" {
			bad(at+".base_url", "is empty: give the ComfyUI server, such as http://127.0.0.1:8188")
		}
		if strings.TrimSpace(im.Workflow) == "" {
			bad(at+".workflow", `is empty: give the path of a workflow exported with "Export (API)", with {{prompt}} in its positive prompt`)
		}
		if im.Model != "" {
			bad(at+".model", "is for the openai back end; the ComfyUI workflow chooses its checkpoint")
		}
	default:
		bad(at+".backend", "%q is not %s or %s", im.Backend, ImagesOpenAI, ImagesComfyUI)
		return
	}
	if im.BaseURL != "" {
		if u, err := url.Parse(im.BaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(at+".base_url", "%q must be an absolute http:// or https:// URL", im.BaseURL)
		}
	}
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"timeout", im.Timeout}, {"poll_interval", im.PollInterval}, {"keep", im.Keep}} {
		if d.v < 0 {
			bad(at+"."+d.key, "%v must be a positive duration, or 0 for the default", d.v)
		}
	}
	if im.Timeout > 0 && im.PollInterval >= im.Timeout {
		bad(at+".poll_interval", "%v is not shorter than timeout %v", im.PollInterval, im.Timeout)
	}
	if im.Keep > 0 && im.Keep < time.Minute {
		bad(at+".keep", "%v is shorter than a minute: the pictures would expire before anyone saw them", im.Keep)
	}
}
