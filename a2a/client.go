package a2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"github.com/agentcraftlab/agentcraft/internal/tracing"
)

// Well-known card paths, the current one first.
const (
	CardPath       = "/.well-known/agent-card.json"
	LegacyCardPath = "/.well-known/agent.json"
)

// ClientOptions configure a Client.
type ClientOptions struct {
	// HTTPClient makes the requests; workflow nodes pass the egress-guarded
	// client. Default http.DefaultClient.
	HTTPClient *http.Client
	// Token, when set, is sent as Authorization: Bearer on every request,
	// the card's included.
	Token string
	// Header is added to every request. Default none.
	Header http.Header
	// Version forces a protocol version, Version10 or Version03; empty (the
	// default) picks it from the card and falls back from 1.0 to 0.3 when
	// the server does not know a 1.0 method.
	Version string
}

// Client calls one remote agent over JSON-RPC, through the SDK's client
// (a2aclient) with its 1.0 transport or its 0.3 compatibility transport
// (a2av0). It is safe for concurrent use.
type Client struct {
	card   *AgentCard
	hc     *http.Client
	forced bool

	mu      sync.Mutex // guards version and sdk
	version string
	sdk     *a2aclient.Client
}

// NewClient discovers the agent card at url (see DiscoverCard) and returns
// a client for the agent it describes.
func NewClient(ctx context.Context, url string, opts *ClientOptions) (*Client, error) {
	card, err := DiscoverCard(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	return NewClientFromCard(ctx, card, opts)
}

// NewClientFromCard returns a client for the agent card describes: the
// first JSON-RPC 1.x interface of the card, else its first 0.x one (or the
// interface of the version ClientOptions.Version forces).
func NewClientFromCard(ctx context.Context, card *AgentCard, opts *ClientOptions) (*Client, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	switch o.Version {
	case "", Version10, Version03:
	default:
		return nil, fmt.Errorf("a2a: ClientOptions.Version %q is not supported; use %q, %q or leave it empty", o.Version, Version10, Version03)
	}
	c := &Client{card: card, hc: httpClient(&o), forced: o.Version != ""}
	iface := endpoint(card, o.Version)
	if iface == nil && o.Version == Version03 {
		// A 1.0-only card: try 0.3 at its URL, as asked.
		if in := endpoint(card, Version10); in != nil {
			iface = &AgentInterface{URL: in.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}
		}
	}
	if iface == nil {
		return nil, fmt.Errorf("a2a: agent card of %q offers no JSON-RPC interface%s; this client speaks only the JSON-RPC binding", card.Name, forVersion(o.Version))
	}
	if err := c.connect(ctx, iface); err != nil {
		return nil, err
	}
	return c, nil
}

func forVersion(v string) string {
	if v == "" {
		return ""
	}
	return " for A2A " + v
}

// versionOf names the protocol version of an interface: Version10 or
// Version03, "" for anything else.
func versionOf(v a2a.ProtocolVersion) string {
	s := strings.TrimPrefix(string(v), "v")
	switch {
	case s == "1" || strings.HasPrefix(s, "1."):
		return Version10
	case strings.HasPrefix(s, "0."):
		return Version03
	}
	return ""
}

// endpoint picks the card's JSON-RPC interface of version (any when
// empty, 1.0 before 0.3).
func endpoint(card *AgentCard, version string) *AgentInterface {
	var legacy *AgentInterface
	for _, in := range card.SupportedInterfaces {
		if in == nil || !strings.EqualFold(string(in.ProtocolBinding), string(a2a.TransportProtocolJSONRPC)) {
			continue
		}
		switch v := versionOf(in.ProtocolVersion); {
		case v == Version10 && version != Version03:
			return in
		case v == Version03 && version != Version10 && legacy == nil:
			legacy = in
		}
	}
	return legacy
}

// connect makes the SDK client for iface.
func (c *Client) connect(ctx context.Context, iface *AgentInterface) error {
	version := versionOf(iface.ProtocolVersion)
	one := *c.card
	in := *iface
	in.ProtocolBinding = a2a.TransportProtocolJSONRPC
	one.SupportedInterfaces = []*AgentInterface{&in}
	sdk, err := a2aclient.NewFromCard(ctx, &one,
		a2aclient.WithDefaultsDisabled(),
		a2aclient.WithJSONRPCTransport(c.hc),
		a2aclient.WithCompatTransport(a2av0.Version, a2a.TransportProtocolJSONRPC,
			a2av0.NewJSONRPCTransportFactory(a2av0.JSONRPCTransportConfig{Client: c.hc})))
	if err != nil {
		return fmt.Errorf("a2a: connect to %s: %w", iface.URL, err)
	}
	c.mu.Lock()
	c.sdk, c.version = sdk, version
	c.mu.Unlock()
	return nil
}

// current returns the SDK client in use and its version.
func (c *Client) current() (*a2aclient.Client, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sdk, c.version
}

// fallback switches a 1.0 client to 0.3 after the server answered "method
// not found"; it reports whether it did. Agents whose card claims 1.0
// while they know only the 0.3 method names are common, and the SDK
// client does not retry by itself.
func (c *Client) fallback(ctx context.Context, err error) bool {
	_, version := c.current()
	if c.forced || version != Version10 || !errors.Is(err, a2a.ErrMethodNotFound) {
		return false
	}
	iface := endpoint(c.card, Version03)
	if iface == nil {
		in := endpoint(c.card, Version10)
		iface = &AgentInterface{URL: in.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}
	}
	return c.connect(ctx, iface) == nil
}

// Card returns the agent card the client was made from.
func (c *Client) Card() *AgentCard { return c.card }

// Version returns the protocol version in use, Version10 or Version03.
func (c *Client) Version() string {
	_, v := c.current()
	return v
}

// SendMessage sends req and returns the agent's answer: a *Task, or a
// *Message for an agent that answers directly. A message without an id or
// role gets a fresh id and the user role.
func (c *Client) SendMessage(ctx context.Context, req *SendMessageRequest) (Event, error) {
	fillMessage(req)
	for {
		sdk, _ := c.current()
		r, err := sdk.SendMessage(ctx, req)
		if err != nil && c.fallback(ctx, err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("a2a: SendMessage: %w", err)
		}
		return r, nil
	}
}

// SendText sends text as a user message and returns the agent's answer as
// text (see ResponseText) and the task id, empty when the agent answered
// with a message. A task that failed, was rejected or canceled is an error.
func (c *Client) SendText(ctx context.Context, text string) (answer, taskID string, err error) {
	r, err := c.SendMessage(ctx, &SendMessageRequest{Message: NewMessage(RoleUser, NewTextPart(text))})
	if err != nil {
		return "", "", err
	}
	if t, ok := r.(*Task); ok {
		taskID = string(t.ID)
		if err := taskError(t); err != nil {
			return ResponseText(r), taskID, err
		}
	}
	return ResponseText(r), taskID, nil
}

// taskError reports a task that ended without an answer.
func taskError(t *Task) error {
	switch t.Status.State {
	case StateFailed, StateRejected, StateCanceled:
		msg := ""
		if t.Status.Message != nil {
			msg = ": " + Text(t.Status.Message.Parts)
		}
		return fmt.Errorf("a2a: task %s ended %s%s", t.ID, t.Status.State, msg)
	}
	return nil
}

// GetTask returns the task with the given id.
func (c *Client) GetTask(ctx context.Context, id string) (*Task, error) {
	for {
		sdk, _ := c.current()
		t, err := sdk.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if err != nil && c.fallback(ctx, err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("a2a: GetTask: %w", err)
		}
		return t, nil
	}
}

// CancelTask asks the agent to cancel the task and returns it as it is then.
func (c *Client) CancelTask(ctx context.Context, id string) (*Task, error) {
	for {
		sdk, _ := c.current()
		t, err := sdk.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(id)})
		if err != nil && c.fallback(ctx, err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("a2a: CancelTask: %w", err)
		}
		return t, nil
	}
}

// SendStreamingMessage sends req and streams the agent's events: usually a
// *Task first, then status and artifact updates until a terminal state.
// Breaking out of the loop closes the connection.
func (c *Client) SendStreamingMessage(ctx context.Context, req *SendMessageRequest) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		fillMessage(req)
		for first := true; ; first = false {
			sdk, _ := c.current()
			retry := false
			for ev, err := range sdk.SendStreamingMessage(ctx, req) {
				if err != nil {
					if first && c.fallback(ctx, err) {
						retry = true
						break
					}
					yield(nil, fmt.Errorf("a2a: SendStreamingMessage: %w", err))
					return
				}
				first = false
				if !yield(ev, nil) {
					return
				}
			}
			if !retry {
				return
			}
		}
	}
}

// fillMessage gives a request's message the id and role the protocol
// requires.
func fillMessage(req *SendMessageRequest) {
	if req.Message == nil {
		req.Message = &Message{}
	}
	m := req.Message
	if m.ID == "" {
		m.ID = a2a.NewMessageID()
	}
	if m.Role == "" {
		m.Role = RoleUser
	}
}

// DiscoverCard fetches an agent card with the SDK's resolver. A url ending
// in .json is the card's own URL; any other is the agent's base URL, where
// the card is looked for at CardPath, then at LegacyCardPath (cards of A2A
// before 0.3). Cards of 0.3 (url, protocolVersion, preferredTransport) are
// read into the 1.0 shape by the SDK's compatibility parser. opts may be
// nil; its HTTPClient, Token and Header are used.
func DiscoverCard(ctx context.Context, rawURL string, opts *ClientOptions) (*AgentCard, error) {
	var o ClientOptions
	if opts != nil {
		o = *opts
	}
	if rawURL == "" {
		return nil, errors.New("a2a: agent URL is empty; give the agent's base URL or its card URL")
	}
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("a2a: agent URL %q is not an absolute URL", rawURL)
	}
	base := u.Scheme + "://" + u.Host
	paths := []string{u.Path}
	if !strings.HasSuffix(u.Path, ".json") {
		p := strings.TrimRight(u.Path, "/")
		paths = []string{p + CardPath, p + LegacyCardPath}
	}
	resolver := &agentcard.Resolver{Client: httpClient(&o), CardParser: parseCard}
	var errs []error
	for _, p := range paths {
		card, err := resolver.Resolve(ctx, base, agentcard.WithPath(p), agentcard.WithRequestHeader("Accept", "application/json"))
		if err == nil {
			return card, nil
		}
		errs = append(errs, fmt.Errorf("a2a: agent card %s: %w", base+p, err))
		var status *agentcard.ErrStatusNotOK
		if !errors.As(err, &status) || status.StatusCode != http.StatusNotFound {
			break // only a missing card is worth another path
		}
	}
	return nil, errors.Join(errs...)
}

// parseCard reads a 1.0 or a 0.3 card. A 0.3 card that names no
// preferredTransport gets JSON-RPC, the 0.3 default, which the SDK parser
// does not apply.
func parseCard(body []byte) (*AgentCard, error) {
	card, err := a2av0.NewAgentCardParser()(body)
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %w", err)
	}
	if card.Name == "" {
		return nil, errors.New("the card has no name; is this URL an A2A agent?")
	}
	if len(card.SupportedInterfaces) == 0 {
		var legacy struct {
			URL             string `json:"url"`
			ProtocolVersion string `json:"protocolVersion"`
		}
		if json.Unmarshal(body, &legacy) == nil && legacy.URL != "" {
			v := a2a.ProtocolVersion(legacy.ProtocolVersion)
			if v == "" {
				v = a2av0.Version
			}
			card.SupportedInterfaces = []*AgentInterface{{URL: legacy.URL, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: v}}
		}
	}
	return card, nil
}

// httpClient is o's client sending o's token and headers.
func httpClient(o *ClientOptions) *http.Client {
	hc := o.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	if o.Token == "" && len(o.Header) == 0 {
		// The agent called continues the caller's trace (W3C
		// traceparent; a pass-through while tracing is off).
		traced := *hc
		traced.Transport = tracing.Transport(hc.Transport)
		return &traced
	}
	h := o.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if o.Token != "" {
		h.Set("Authorization", "Bearer "+o.Token)
	}
	withHeader := *hc
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	withHeader.Transport = tracing.Transport(headerTransport{base: base, header: h})
	return &withHeader
}

// headerTransport adds header to every request.
type headerTransport struct {
	base   http.RoundTripper
	header http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.header {
		r.Header.Del(k)
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return t.base.RoundTrip(r)
}
