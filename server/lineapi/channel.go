package lineapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/line/line-bot-sdk-go/v8/linebot/messaging_api"

	"github.com/agentcraftlab/agentcraft/identity"
	"github.com/agentcraftlab/agentcraft/store"
	"github.com/agentcraftlab/agentcraft/task"
)

// Tasks is what the webhook needs of the task service.
type Tasks interface {
	Submit(ctx context.Context, r task.Request) (task.Outcome, error)
	Decide(ctx context.Context, d task.Decision) (store.Approval, error)
}

// Accounts resolves a LINE user to the linked AgentCraft user and role in
// the workspace.
type Accounts interface {
	// LookupLINE returns ok=false when the LINE user has linked no account.
	LookupLINE(ctx context.Context, workspaceID, lineUserID string) (userID string, role identity.Role, ok bool, err error)
}

// DefaultAPIBaseURL is LINE's Messaging API.
const DefaultAPIBaseURL = "https://api.line.me"

// Options configure a Channel. ChannelSecret, ChannelAccessToken and
// WorkspaceID are required.
type Options struct {
	// ChannelSecret verifies the x-line-signature of webhook requests
	// (channels.line.channel_secret). Required.
	ChannelSecret string
	// ChannelAccessToken authenticates the calls to the Messaging API
	// (channels.line.channel_access_token). Required.
	ChannelAccessToken string
	// APIBaseURL is the Messaging API's base URL; default
	// DefaultAPIBaseURL. Tests point it at linetest.
	APIBaseURL string
	// WorkspaceID is the workspace the channel's requests belong to
	// (channels.line.workspace). Required.
	WorkspaceID string
	// Tasks and Accounts serve the webhook. A Channel built without them
	// can still send (Sender); its webhook answers 503, so that a
	// composition root that builds the Sender before the task service
	// sees the mistake instead of a silent drop.
	Tasks    Tasks
	Accounts Accounts
	// HTTPClient calls the Messaging API; default http.DefaultClient.
	HTTPClient *http.Client
	// Logger receives the channel's logs; default discards them.
	Logger *slog.Logger
	// Now is the clock that decides whether a reply token is still
	// fresh; default time.Now.
	Now func() time.Time
	// EventTimeout bounds the handling of one webhook request's events,
	// which runs detached from the request (LINE hangs up after a few
	// seconds, and a task submitted must not be cut off half-way);
	// default 10 s.
	EventTimeout time.Duration
	// Location is the time zone of the expiry shown on approval cards;
	// default UTC.
	Location *time.Location
}

// Channel is the LINE Messaging API channel of one workspace: its webhook
// turns LINE events into task requests and decisions, its Sender delivers
// the task service's notifications.
type Channel struct {
	secret      string
	workspaceID string
	tasks       Tasks
	accounts    Accounts
	log         *slog.Logger
	now         func() time.Time
	timeout     time.Duration
	loc         *time.Location
	// api is a template, copied per call: the SDK client keeps the
	// context of WithContext in a field, so sharing one value between
	// concurrent calls would race.
	api messaging_api.MessagingApiAPI
}

// New returns the channel configured by opts.
func New(opts Options) (*Channel, error) {
	var missing []string
	if opts.ChannelSecret == "" {
		missing = append(missing, "ChannelSecret (channels.line.channel_secret)")
	}
	if opts.ChannelAccessToken == "" {
		missing = append(missing, "ChannelAccessToken (channels.line.channel_access_token)")
	}
	if opts.WorkspaceID == "" {
		missing = append(missing, "WorkspaceID (channels.line.workspace)")
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("lineapi: options are missing %s; set them from the LINE Developers console", joinAnd(missing))
	}
	if opts.EventTimeout < 0 {
		return nil, errors.New("lineapi: EventTimeout is negative; leave it 0 for the default of 10s")
	}
	base := cmp.Or(opts.APIBaseURL, DefaultAPIBaseURL)
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	api, err := messaging_api.NewMessagingApiAPI(opts.ChannelAccessToken,
		messaging_api.WithEndpoint(base),
		messaging_api.WithHTTPClient(hc))
	if err != nil {
		return nil, fmt.Errorf("lineapi: APIBaseURL %q: %w; use an absolute URL such as %s", base, err, DefaultAPIBaseURL)
	}
	c := &Channel{
		secret:      opts.ChannelSecret,
		workspaceID: opts.WorkspaceID,
		tasks:       opts.Tasks,
		accounts:    opts.Accounts,
		log:         opts.Logger,
		now:         opts.Now,
		timeout:     cmp.Or(opts.EventTimeout, 10*time.Second),
		loc:         opts.Location,
		api:         *api,
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.loc == nil {
		c.loc = time.UTC
	}
	return c, nil
}

// client returns a Messaging API client bound to ctx.
func (c *Channel) client(ctx context.Context) *messaging_api.MessagingApiAPI {
	api := c.api
	return api.WithContext(ctx)
}

func joinAnd(s []string) string {
	switch len(s) {
	case 1:
		return s[0]
	case 2:
		return s[0] + " and " + s[1]
	}
	out := ""
	for i, x := range s {
		switch {
		case i == len(s)-1:
			out += ", and " + x
		case i > 0:
			out += ", " + x
		default:
			out = x
		}
	}
	return out
}
