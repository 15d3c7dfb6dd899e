package imagegen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

// Defaults of OpenAIOptions.
const (
	DefaultOpenAIBaseURL = "https://api.openai.com/v1"
	DefaultOpenAIModel   = "gpt-image-1"
)

// OpenAIOptions configure an OpenAI back end.
type OpenAIOptions struct {
	// BaseURL is the API root, /v1 included. Default
	// DefaultOpenAIBaseURL; an OpenAI-compatible server's own, such as
	// http://127.0.0.1:8080/v1 for LocalAI.
	BaseURL string
	// APIKey is sent as a Bearer token. Default none.
	APIKey string
	// Model names the image model. Default DefaultOpenAIModel.
	Model string
	// MaxImageBytes bounds one picture. Default DefaultMaxImageBytes.
	MaxImageBytes int64
}

// String describes o with the key redacted.
func (o OpenAIOptions) String() string {
	return fmt.Sprintf("imagegen.OpenAIOptions{BaseURL: %q, APIKey: %s, Model: %q}", o.BaseURL, redacted(o.APIKey), o.Model)
}

// LogValue implements slog.LogValuer with the key redacted.
func (o OpenAIOptions) LogValue() slog.Value {
	return slog.GroupValue(slog.String("base_url", o.BaseURL), slog.String("api_key", redacted(o.APIKey)), slog.String("model", o.Model))
}

func redacted(s string) string {
	if s == "" {
		return `""`
	}
	return "[redacted]"
}

// OpenAI draws with the OpenAI images API. Create it with NewOpenAI; it is
// safe for concurrent use.
type OpenAI struct {
	client   *http.Client
	base     *url.URL // path without a trailing slash
	key      string
	model    string
	maxImage int64
}

var _ Backend = (*OpenAI)(nil)

// NewOpenAI returns the back end of the images API at opts.BaseURL, which
// sends every request through client. It fails when client is nil or the
// base URL is not an absolute http(s) URL.
func NewOpenAI(client *http.Client, opts *OpenAIOptions) (*OpenAI, error) {
	var o OpenAIOptions
	if opts != nil {
		o = *opts
	}
	if client == nil {
		return nil, errors.New("imagegen: new openai: no HTTP client: pass the egress-policy client")
	}
	base, err := parseBaseURL(cmp.Or(o.BaseURL, DefaultOpenAIBaseURL))
	if err != nil {
		return nil, fmt.Errorf("imagegen: new openai: base URL: %w", err)
	}
	if o.MaxImageBytes < 0 {
		return nil, fmt.Errorf("imagegen: new openai: MaxImageBytes is %d: want 0 (default) or more", o.MaxImageBytes)
	}
	return &OpenAI{client: client, base: base, key: o.APIKey, model: cmp.Or(o.Model, DefaultOpenAIModel),
		maxImage: cmp.Or(o.MaxImageBytes, DefaultMaxImageBytes)}, nil
}

// openaiRequest is the body of POST /images/generations.
type openaiRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              int    `json:"n"`
	Size           string `json:"size,omitempty"`
	ResponseFormat string `json:"response_format,omitempty"`
}

// openaiAnswer is its answer, also what parseOpenAIAnswer reads.
type openaiAnswer struct {
	Data []struct {
		B64JSON string `json:"b64_json"`
		URL     string `json:"url"`
	} `json:"data"`
}

// Generate implements Backend.
func (o *OpenAI) Generate(ctx context.Context, req Request) ([]Image, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("imagegen: openai: %w", err)
	}
	switch {
	case req.NegativePrompt != "":
		return nil, errors.New("imagegen: openai: negative_prompt: the OpenAI images API has no negative prompt: say what to avoid in the prompt instead")
	case req.Seed != nil:
		return nil, errors.New("imagegen: openai: seed: the OpenAI images API takes no seed: leave it out")
	}
	body := openaiRequest{Model: o.model, Prompt: req.Prompt, N: req.count(), Size: req.Size}
	if !strings.HasPrefix(o.model, "gpt-image") {
		// gpt-image models always answer base64 and refuse the field.
		body.ResponseFormat = "b64_json"
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("imagegen: openai: encode request: %w", err)
	}
	u := o.endpoint("images/generations")
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(payload))
	if err != nil {
		return nil, fmt.Errorf("imagegen: openai: %w", err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	o.authorize(hreq)
	resp, err := o.client.Do(hreq)
	if err != nil {
		return nil, fmt.Errorf("imagegen: openai: POST %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		data, _ := readLimited(resp.Body, maxErrorBody)
		return nil, fmt.Errorf("imagegen: openai: POST %s: HTTP %d: %s", u, resp.StatusCode, openaiErrorMessage(data))
	}
	// Base64 takes 4 bytes per 3; the rest of the document is small.
	data, err := readLimited(resp.Body, int64(req.count())*(o.maxImage/3*4+4096)+1<<20)
	if err != nil {
		return nil, fmt.Errorf("imagegen: openai: read answer: %w", err)
	}
	items, err := parseOpenAIAnswer(data)
	if err != nil {
		return nil, fmt.Errorf("imagegen: openai: %w", err)
	}
	images := make([]Image, 0, len(items))
	for i, it := range items {
		var img []byte
		if it.b64 != nil {
			img = it.b64
		} else if img, err = o.download(ctx, it.url); err != nil {
			return nil, fmt.Errorf("imagegen: openai: data[%d].url: %w", i, err)
		}
		if int64(len(img)) > o.maxImage {
			return nil, fmt.Errorf("imagegen: openai: data[%d]: the image is larger than %d bytes", i, o.maxImage)
		}
		mime, err := sniffImage(img)
		if err != nil {
			return nil, fmt.Errorf("imagegen: openai: data[%d]: %w", i, err)
		}
		images = append(images, Image{Data: img, MIME: mime})
	}
	return images, nil
}

// openaiItem is one picture of an answer: its decoded bytes, or the URL to
// fetch them from.
type openaiItem struct {
	b64 []byte
	url *url.URL
}

// parseOpenAIAnswer reads a 200 answer of /images/generations: at least
// one item, each with valid base64 or an absolute http(s) URL.
func parseOpenAIAnswer(data []byte) ([]openaiItem, error) {
	var ans openaiAnswer
	if err := json.Unmarshal(data, &ans); err != nil {
		return nil, fmt.Errorf("the answer is not the images API's JSON (%v): %s", err, snippet(data))
	}
	if len(ans.Data) == 0 {
		return nil, errors.New("the answer has no images (data is empty)")
	}
	items := make([]openaiItem, 0, len(ans.Data))
	for i, d := range ans.Data {
		switch {
		case d.B64JSON != "":
			img, err := base64.StdEncoding.DecodeString(d.B64JSON)
			if err != nil {
				return nil, fmt.Errorf("data[%d].b64_json is not base64: %w", i, err)
			}
			items = append(items, openaiItem{b64: img})
		case d.URL != "":
			u, err := url.Parse(d.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return nil, fmt.Errorf("data[%d].url %s is not an absolute http or https URL", i, snippet([]byte(d.URL)))
			}
			items = append(items, openaiItem{url: u})
		default:
			return nil, fmt.Errorf("data[%d] has neither b64_json nor url", i)
		}
	}
	return items, nil
}

// download fetches a picture an answer named by URL. The key goes only to
// the API's own host: a URL on a CDN or storage bucket must not learn it.
func (o *OpenAI) download(ctx context.Context, u *url.URL) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	if u.Scheme == o.base.Scheme && u.Host == o.base.Host {
		o.authorize(req)
	}
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d", u.Redacted(), resp.StatusCode)
	}
	data, err := readLimited(resp.Body, o.maxImage)
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", u.Redacted(), err)
	}
	return data, nil
}

func (o *OpenAI) authorize(req *http.Request) {
	if o.key != "" {
		req.Header.Set("Authorization", "Bearer "+o.key)
	}
}

func (o *OpenAI) endpoint(path string) string {
	u := *o.base
	u.Path += "/" + path
	return u.String()
}

// openaiErrorMessage is the message of an OpenAI error body
// ({"error": {"message": …}}), or an excerpt of a body that is not one.
func openaiErrorMessage(data []byte) string {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Code    any    `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && e.Error.Message != "" {
		if code, ok := e.Error.Code.(string); ok && code != "" {
			return e.Error.Message + " (" + code + ")"
		}
		return e.Error.Message
	}
	return snippet(data)
}

// parseBaseURL checks an absolute http(s) URL without credentials, query
// or fragment, and drops a trailing slash from its path.
func parseBaseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, err
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return nil, fmt.Errorf("%q is not an absolute http or https URL: write it like http://127.0.0.1:8188", u.Redacted())
	case u.User != nil:
		return nil, fmt.Errorf("%q carries credentials: set the API key instead", u.Redacted())
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%q has a query or fragment: give the root URL only", u.Redacted())
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawPath = ""
	return u, nil
}
