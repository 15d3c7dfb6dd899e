package store

import (
	"context"
	"time"
)

// Driver is the SQL half of the store seam, in the manner of River's
// riverdriver.Executor: one method per SQL verb, named for its aggregate
// and taking a ...Params struct when it needs more than a workspace and an
// id. Validation, defaults, ids, timestamps, error wording and the run
// state machine live once in Core; a driver only runs statements and maps
// its native errors onto ErrNotFound and ErrConflict (a conditional write
// that matched no row is ErrNotFound). store/sqlite and store/postgres each
// implement it on an unexported type and embed the Core built on it.
type Driver interface {
	// Name prefixes every error Core returns: "sqlite", "postgres".
	Name() string
	WorkspaceDriver
	APIKeyDriver
	CredentialDriver
	UsageDriver
	BudgetDriver
	UploadDriver
	OAuthClientDriver
	ToolDriver
	WorkflowDriver
	RunDriver
	KnowledgeDriver
	AgentDriver
	ProviderDriver
	AuditDriver
	IdentityDriver
	ConversationDriver
	MemoryDriver
	TaskDriver
	SkillDriver
	WorkerDriver
	TriggerDriver
}

// WorkflowDriver holds the verbs of Workflows. A workflow reads with the
// definition of its newest version.
type WorkflowDriver interface {
	// WorkflowInsert inserts p.Workflow, complete (version 1), and its
	// first version in one transaction, and returns the row as stored.
	WorkflowInsert(ctx context.Context, p *WorkflowWriteParams) (Workflow, error)
	WorkflowGet(ctx context.Context, workspaceID, id string) (Workflow, error)
	WorkflowGetByName(ctx context.Context, workspaceID, name string) (Workflow, error)
	// WorkflowList orders by name (bytewise).
	WorkflowList(ctx context.Context, workspaceID string) ([]Workflow, error)
	// WorkflowSave, in one transaction, sets the name and description,
	// increments the version and stamps p.Workflow.UpdatedAt, then
	// inserts that version with p.Workflow.Definition; a concurrent save
	// takes the next number, never the same. It returns the row as stored.
	WorkflowSave(ctx context.Context, p *WorkflowWriteParams) (Workflow, error)
	// WorkflowVersionList returns the versions, newest first (nil for an
	// unknown workflow).
	WorkflowVersionList(ctx context.Context, workspaceID, id string) ([]WorkflowVersion, error)
	WorkflowVersionGet(ctx context.Context, p *WorkflowVersionGetParams) (WorkflowVersion, error)
	// WorkflowDelete deletes the workflow with its versions.
	WorkflowDelete(ctx context.Context, workspaceID, id string) error
}

// WorkflowWriteParams is the row a workflow write stores.
type WorkflowWriteParams struct {
	Workflow Workflow
}

// WorkflowVersionGetParams name one version of a workflow.
type WorkflowVersionGetParams struct {
	WorkspaceID, ID string
	Version         int
}

// RunDriver holds the verbs of Runs.
type RunDriver interface {
	// RunInsert inserts p.Run, complete (id, status, times and FinishedAt
	// set; lease empty), and returns the stored row.
	RunInsert(ctx context.Context, p *RunInsertParams) (Run, error)
	RunGet(ctx context.Context, workspaceID, id string) (Run, error)
	RunList(ctx context.Context, p *RunListParams) ([]Run, error)
	// RunListLive returns the queued and running runs of every workspace,
	// oldest first (created_at, then id).
	RunListLive(ctx context.Context) ([]Run, error)
	// RunClaim takes the lease in one statement, so two executors
	// claiming at once cannot both win; no row matched is ErrNotFound.
	RunClaim(ctx context.Context, p *RunClaimParams) (Run, error)
	// RunTransition updates the run in one statement when its status is
	// one of p.From; no row matched is ErrNotFound.
	RunTransition(ctx context.Context, p *RunTransitionParams) (Run, error)
	// RunCheckpointInsert saves the checkpoint and its events atomically:
	// a key saved already is ErrConflict and writes nothing; a run that is
	// not the workspace's is ErrNotFound. Events already stored (same run
	// and seq) are skipped.
	RunCheckpointInsert(ctx context.Context, p *RunCheckpointInsertParams) error
	// RunEventInsert stores the events atomically, skipping those stored
	// already; an event of a run that is not the workspace's is
	// ErrNotFound naming the run, and stores nothing.
	RunEventInsert(ctx context.Context, p *RunEventInsertParams) error
	// RunCheckpointList returns the run's checkpoints in the order saved
	// (nil for none, whether or not the run exists).
	RunCheckpointList(ctx context.Context, workspaceID, runID string) ([]Checkpoint, error)
	// RunEventList returns the run's events with Seq > p.After, in order.
	RunEventList(ctx context.Context, p *RunEventListParams) ([]RunEvent, error)
	// RunExists reports whether the workspace holds the run.
	RunExists(ctx context.Context, workspaceID, id string) (bool, error)
	// RunCheckpointPage returns up to p.Limit of the run's checkpoints
	// whose row id is above p.After, by row id (nil for none, whether or
	// not the run exists).
	RunCheckpointPage(ctx context.Context, p *RunCheckpointPageParams) ([]CheckpointAt, error)
	// RunStoredBytes sums the stored size of the workspace's checkpoint
	// outputs and event data.
	RunStoredBytes(ctx context.Context, workspaceID string) (int64, error)
}

// RunCheckpointPageParams selects a page of a run's checkpoints.
type RunCheckpointPageParams struct {
	WorkspaceID, RunID string
	After              int64
	Limit              int
}

// CheckpointAt is a checkpoint with its row id, the cursor of pages.
type CheckpointAt struct {
	RowID int64
	Checkpoint
}

// RunInsertParams is the row RunInsert writes.
type RunInsertParams struct {
	Run Run
}

// RunListParams selects runs of one workspace, newest first (created_at,
// then id, both descending). Empty Status and WorkflowID do not filter;
// Limit is positive.
type RunListParams struct {
	WorkspaceID string
	Status      RunStatus
	WorkflowID  string
	TaskID      string
	Executor    string
	TriggerID   string
	Limit       int
}

// RunClaimParams are the arguments of RunClaim: set the run running with
// lease (Owner, Until) and updated_at Now when it is queued or running and
// its lease is free, expired (before Now), Owner's already, or Force.
type RunClaimParams struct {
	WorkspaceID, ID string
	Owner           string
	Now, Until      time.Time
	Force           bool
}

// RunTransitionParams are the arguments of RunTransition: when the run's
// status is one of From, set status To, the non-nil fields of Update,
// updated_at Now and finished_at Finished (nil clears it), and clear the
// lease when Release. A non-empty LeaseOwner adds a condition: the run's
// lease is LeaseOwner's.
type RunTransitionParams struct {
	WorkspaceID, ID string
	From            []RunStatus
	To              RunStatus
	Update          RunUpdate
	Now             time.Time
	Finished        *time.Time
	Release         bool
	LeaseOwner      string
}

// RunCheckpointInsertParams are the rows RunCheckpointInsert writes, all
// stamped Now. Every event's RunID is the checkpoint's.
type RunCheckpointInsertParams struct {
	WorkspaceID string
	Checkpoint  Checkpoint
	Events      []RunEvent
	Now         time.Time
}

// RunEventInsertParams are the events RunEventInsert writes, stamped Now.
// There is at least one; they come in runs of one RunID.
type RunEventInsertParams struct {
	WorkspaceID string
	Events      []RunEvent
	Now         time.Time
}

// RunEventListParams selects at most Limit (positive) events of a run.
type RunEventListParams struct {
	WorkspaceID, RunID string
	After              int64
	Limit              int
}

// KnowledgeDriver holds the verbs of KnowledgeBases and IngestJobs.
type KnowledgeDriver interface {
	// IngestJobClaim sets a queued or running job running with owner as
	// its executor, stamps UpdatedAt with p.Now and returns the stored
	// job; no such live job is ErrNotFound.
	IngestJobClaim(ctx context.Context, p *IngestJobClaimParams) (IngestJob, error)
	// IngestJobLive returns every queued or running job of every
	// workspace, oldest first (created_at, then id).
	IngestJobLive(ctx context.Context) ([]IngestLive, error)
	// KnowledgeBaseInsert inserts p.Base, complete, and returns the
	// stored row.
	KnowledgeBaseInsert(ctx context.Context, p *KnowledgeBaseInsertParams) (KnowledgeBase, error)
	KnowledgeBaseGet(ctx context.Context, workspaceID, id string) (KnowledgeBase, error)
	// KnowledgeBaseGetByName finds a persistent base (no expiry) by name.
	KnowledgeBaseGetByName(ctx context.Context, workspaceID, name string) (KnowledgeBase, error)
	// KnowledgeBaseList returns the persistent bases ordered by name
	// (bytewise).
	KnowledgeBaseList(ctx context.Context, workspaceID string) ([]KnowledgeBase, error)
	KnowledgeBaseUpdate(ctx context.Context, p *KnowledgeBaseUpdateParams) (KnowledgeBase, error)
	// KnowledgeBaseDelete deletes the base with its ingest jobs and
	// sources; no row is ErrNotFound.
	KnowledgeBaseDelete(ctx context.Context, workspaceID, id string) error
	// KnowledgeBaseListExpired returns the bases with an expiry at or
	// before p.Now, by expiry then id.
	KnowledgeBaseListExpired(ctx context.Context, p *KnowledgeBaseListExpiredParams) ([]KnowledgeBase, error)
	KnowledgeBaseExists(ctx context.Context, workspaceID, id string) (bool, error)

	KnowledgeSourceGet(ctx context.Context, workspaceID, kbID, name string) (KnowledgeSource, error)
	// KnowledgeSourcePut upserts the source and recounts its base in one
	// transaction that serializes with the base's other puts and deletes;
	// a base that is not the workspace's is ErrNotFound.
	KnowledgeSourcePut(ctx context.Context, p *KnowledgeSourcePutParams) error
	// KnowledgeSourceDelete is KnowledgeSourcePut's delete; no source is
	// ErrNotFound.
	KnowledgeSourceDelete(ctx context.Context, p *KnowledgeSourceDeleteParams) error
	// KnowledgeSourceList returns the base's sources by name.
	KnowledgeSourceList(ctx context.Context, kbID string) ([]KnowledgeSource, error)

	// IngestJobInsert inserts p.Job, complete, when the base p.Job names
	// is the workspace's (otherwise ErrNotFound), and returns the stored
	// row.
	IngestJobInsert(ctx context.Context, p *IngestJobParams) (IngestJob, error)
	IngestJobGet(ctx context.Context, workspaceID, id string) (IngestJob, error)
	// IngestJobUpdate writes the progress fields of a job still queued or
	// running; no row matched is ErrNotFound.
	IngestJobUpdate(ctx context.Context, p *IngestJobParams) (IngestJob, error)
	// IngestJobList returns a base's jobs, newest first.
	IngestJobList(ctx context.Context, p *IngestJobListParams) ([]IngestJob, error)
}

// KnowledgeBaseInsertParams is the row KnowledgeBaseInsert writes.
type KnowledgeBaseInsertParams struct {
	Base KnowledgeBase
}

// KnowledgeBaseUpdateParams rename a base and stamp it Now.
type KnowledgeBaseUpdateParams struct {
	WorkspaceID, ID   string
	Name, Description string
	Now               time.Time
}

// KnowledgeBaseListExpiredParams select at most Limit (positive) bases.
type KnowledgeBaseListExpiredParams struct {
	Now   time.Time
	Limit int
}

// KnowledgeSourcePutParams is the source KnowledgeSourcePut writes,
// stamped Now, as is the recounted base.
type KnowledgeSourcePutParams struct {
	WorkspaceID string
	Source      KnowledgeSource
	Now         time.Time
}

// KnowledgeSourceDeleteParams name the source to delete.
type KnowledgeSourceDeleteParams struct {
	WorkspaceID, KnowledgeBaseID, Name string
	Now                                time.Time
}

// IngestJobParams is the job row an insert or update writes: Job is
// complete (UpdatedAt is the time to stamp), Files its Files as JSON.
type IngestJobParams struct {
	Job   IngestJob
	Files []byte
}

// IngestJobListParams select at most Limit (positive) jobs of a base.
type IngestJobListParams struct {
	WorkspaceID, KnowledgeBaseID string
	Limit                        int
}

// AgentDriver holds the verbs of Agents. Every write returns the row as
// stored.
type AgentDriver interface {
	AgentInsert(ctx context.Context, p *AgentWriteParams) (Agent, error)
	AgentGet(ctx context.Context, workspaceID, id string) (Agent, error)
	AgentGetByName(ctx context.Context, workspaceID, name string) (Agent, error)
	// AgentList orders by name (bytewise).
	AgentList(ctx context.Context, workspaceID string) ([]Agent, error)
	// AgentUpdate rewrites every column but id, workspace and created_at.
	AgentUpdate(ctx context.Context, p *AgentWriteParams) (Agent, error)
	AgentDelete(ctx context.Context, workspaceID, id string) error
	// AgentUpsert inserts, or on (workspace, name) rewrites the row but
	// its id and created_at.
	AgentUpsert(ctx context.Context, p *AgentWriteParams) (Agent, error)
}

// AgentWriteParams is the row an agent write stores: Agent complete and
// stamped, Params its Params encoded as JSON.
type AgentWriteParams struct {
	Agent  Agent
	Params []byte
}

// ProviderDriver holds the verbs of Providers, as AgentDriver's.
type ProviderDriver interface {
	ProviderInsert(ctx context.Context, p *ProviderWriteParams) (Provider, error)
	ProviderGet(ctx context.Context, workspaceID, id string) (Provider, error)
	ProviderGetByName(ctx context.Context, workspaceID, name string) (Provider, error)
	ProviderList(ctx context.Context, workspaceID string) ([]Provider, error)
	ProviderUpdate(ctx context.Context, p *ProviderWriteParams) (Provider, error)
	ProviderDelete(ctx context.Context, workspaceID, id string) error
	ProviderUpsert(ctx context.Context, p *ProviderWriteParams) (Provider, error)
}

// ProviderWriteParams is the row a provider write stores; Provider.Settings
// is nil for SQL NULL.
type ProviderWriteParams struct {
	Provider Provider
}

// AuditDriver holds the verbs of AuditLog.
type AuditDriver interface {
	// AuditInsert stores the events, complete (id and created_at set), in
	// one transaction after checking that every workspace in
	// p.WorkspaceIDs exists (audit_log has no foreign key): a missing one
	// is ErrNotFound and stores nothing.
	AuditInsert(ctx context.Context, p *AuditInsertParams) error
	// AuditList returns at most p.Limit events of p.Filter, newest first
	// (created_at, then id bytewise, both descending), after the cursor
	// position when p.After is set. Filter.Since and Until are normalized
	// with Timestamp; Filter.Cursor and Limit are not to be read.
	AuditList(ctx context.Context, p *AuditListParams) ([]AuditEvent, error)
}

// AuditInsertParams are the events AuditInsert writes and their distinct
// workspaces.
type AuditInsertParams struct {
	Events       []AuditEvent
	WorkspaceIDs []string
}

// AuditListParams select audit events; see AuditDriver.AuditList.
type AuditListParams struct {
	Filter AuditFilter
	// After, when set, keeps the events strictly before (AfterTime,
	// AfterID) in the listing's order.
	After     bool
	AfterTime time.Time
	AfterID   string
	Limit     int
}

// IngestJobClaimParams is the claim IngestJobClaim writes.
type IngestJobClaimParams struct {
	WorkspaceID, ID, Owner string
	Now                    time.Time
}

// WorkspaceDriver holds the verbs of Workspaces.
type WorkspaceDriver interface {
	// WorkspaceInsert inserts p.Workspace, complete; a taken name is
	// ErrConflict, or stores nothing and succeeds with p.IfAbsent.
	WorkspaceInsert(ctx context.Context, p *WorkspaceInsertParams) error
	WorkspaceGet(ctx context.Context, id string) (Workspace, error)
	WorkspaceGetByName(ctx context.Context, name string) (Workspace, error)
	// WorkspaceList orders by name (bytewise).
	WorkspaceList(ctx context.Context) ([]Workspace, error)
	// WorkspaceRename sets the name and returns the stored row; a taken
	// name is ErrConflict, no row ErrNotFound.
	WorkspaceRename(ctx context.Context, p *WorkspaceRenameParams) (Workspace, error)
	// WorkspaceDelete deletes the workspace (its rows cascade); no row is
	// ErrNotFound.
	WorkspaceDelete(ctx context.Context, id string) error
}

// WorkspaceRenameParams name a workspace and its new name.
type WorkspaceRenameParams struct {
	ID, Name string
}

// WorkspaceInsertParams is the row WorkspaceInsert writes. IfAbsent lets a
// concurrent creator's row of the same name win (ON CONFLICT DO NOTHING).
type WorkspaceInsertParams struct {
	Workspace Workspace
	IfAbsent  bool
}

// APIKeyDriver holds the verbs of APIKeys.
type APIKeyDriver interface {
	// APIKeyInsert inserts p.Key, complete (LastUsedAt and RevokedAt nil).
	APIKeyInsert(ctx context.Context, p *APIKeyInsertParams) error
	// APIKeyGetByHash returns the key with the hash that is not revoked.
	APIKeyGetByHash(ctx context.Context, hash []byte) (APIKey, error)
	APIKeyGet(ctx context.Context, workspaceID, id string) (APIKey, error)
	// APIKeyList orders by created_at, then id (bytewise).
	APIKeyList(ctx context.Context, workspaceID string) ([]APIKey, error)
	// APIKeyRevoke sets revoked_at to p.At unless it is set already; no
	// row is ErrNotFound.
	APIKeyRevoke(ctx context.Context, p *APIKeyStampParams) error
	// APIKeyTouch sets last_used_at to p.At unless it is later already;
	// no row is ErrNotFound (an existing key touched earlier is not).
	APIKeyTouch(ctx context.Context, p *APIKeyStampParams) error
}

// APIKeyInsertParams is the row APIKeyInsert writes.
type APIKeyInsertParams struct {
	Key APIKey
}

// APIKeyStampParams name a key and the time to stamp on it.
type APIKeyStampParams struct {
	WorkspaceID, ID string
	At              time.Time
}

// CredentialDriver holds the verbs of Credentials.
type CredentialDriver interface {
	// CredentialUpsert inserts p.Credential, complete, or on (workspace,
	// provider) rewrites its ciphertext, key id and updated_at; it returns
	// the row as stored (the existing id and created_at).
	CredentialUpsert(ctx context.Context, p *CredentialUpsertParams) (Credential, error)
	CredentialGet(ctx context.Context, workspaceID, provider string) (Credential, error)
	// CredentialList orders by provider (bytewise) and leaves Ciphertext
	// nil.
	CredentialList(ctx context.Context, workspaceID string) ([]Credential, error)
	CredentialDelete(ctx context.Context, workspaceID, provider string) error
}

// CredentialUpsertParams is the row CredentialUpsert writes.
type CredentialUpsertParams struct {
	Credential Credential
}

// UsageDriver holds the verbs of Usage.
type UsageDriver interface {
	// UsageInsert stores p.Records, complete (id and created_at set), and
	// adds them to their months' running counts (budget_spend, as
	// SpendDeltas totals them with the workspaces' reset_at read in the
	// same transaction), in
	// one transaction: all or none.
	UsageInsert(ctx context.Context, p *UsageInsertParams) error
	// UsageList returns at most p.Limit (positive) records created at or
	// after p.Since, newest first (created_at, then id bytewise, both
	// descending).
	UsageList(ctx context.Context, p *UsageListParams) ([]UsageRecord, error)
	// UsageSummary totals the records created at or after p.Since per
	// agent, provider and model, ordered bytewise by those three.
	UsageSummary(ctx context.Context, p *UsageSummaryParams) ([]UsageSummary, error)
	// UsageSummaryBy totals the records created at or after p.Since per
	// group of p.By (valid), ordered bytewise by key; days are UTC.
	UsageSummaryBy(ctx context.Context, p *UsageSummaryByParams) ([]UsageTotal, error)
	// UsageSpend reads the budget_spend row of (workspaceID, month); a
	// missing row is the zero UsageSpend (with Month set), not an error.
	UsageSpend(ctx context.Context, workspaceID, month string) (UsageSpend, error)
	// UsageRollup, in one transaction, adds the totals of the records
	// created before p.Before to the daily totals (per workspace, UTC
	// day, agent, workflow, actor, api key, end user, provider, model),
	// deletes those records and returns how many it deleted.
	UsageRollup(ctx context.Context, p *UsageRollupParams) (int64, error)
}

// UsageRollupParams select the records UsageRollup folds.
type UsageRollupParams struct {
	Before time.Time
}

// UsageInsertParams are the rows UsageInsert writes; there is at least one.
type UsageInsertParams struct {
	Records []UsageRecord
}

// UsageListParams select usage records; see UsageDriver.UsageList.
type UsageListParams struct {
	WorkspaceID string
	Since       time.Time
	Limit       int
}

// UsageSummaryParams select the records UsageSummary totals.
type UsageSummaryParams struct {
	WorkspaceID string
	Since       time.Time
}

// UsageSummaryByParams select the records UsageSummaryBy totals and how.
type UsageSummaryByParams struct {
	WorkspaceID string
	Since       time.Time
	By          UsageGroup
}

// UploadDriver holds the verbs of Uploads.
type UploadDriver interface {
	// UploadInsert inserts p.Upload, complete (Data never nil).
	UploadInsert(ctx context.Context, p *UploadInsertParams) error
	// UploadGet returns the upload when it expires after p.Now, with its
	// data only when p.Data.
	UploadGet(ctx context.Context, p *UploadGetParams) (Upload, error)
	UploadDelete(ctx context.Context, workspaceID, id string) error
	// UploadDeleteExpired deletes the uploads of every workspace expiring
	// at or before p.Now and returns how many.
	UploadDeleteExpired(ctx context.Context, p *UploadDeleteExpiredParams) (int, error)
}

// UploadInsertParams is the row UploadInsert writes.
type UploadInsertParams struct {
	Upload Upload
}

// UploadGetParams select an upload; see UploadDriver.UploadGet.
type UploadGetParams struct {
	WorkspaceID, ID string
	Now             time.Time
	Data            bool
}

// UploadDeleteExpiredParams hold the time an upload expires by.
type UploadDeleteExpiredParams struct {
	Now time.Time
}

// OAuthClientDriver holds the verbs of OAuthClients.
type OAuthClientDriver interface {
	// OAuthClientInsert inserts p.Client, complete (RevokedAt nil).
	OAuthClientInsert(ctx context.Context, p *OAuthClientInsertParams) error
	// OAuthClientGet finds the client in any workspace.
	OAuthClientGet(ctx context.Context, id string) (OAuthClient, error)
	// OAuthClientList orders by created_at, then id (bytewise).
	OAuthClientList(ctx context.Context, workspaceID string) ([]OAuthClient, error)
	// OAuthClientRevoke sets revoked_at to p.At unless it is set already;
	// no row is ErrNotFound.
	OAuthClientRevoke(ctx context.Context, p *OAuthClientRevokeParams) error
}

// OAuthClientInsertParams is the row OAuthClientInsert writes.
type OAuthClientInsertParams struct {
	Client OAuthClient
}

// OAuthClientRevokeParams name a client and the time of its revocation.
type OAuthClientRevokeParams struct {
	WorkspaceID, ID string
	At              time.Time
}

// ToolDriver holds the verbs of ToolSettings, MCPServers and
// OpenAPIImports. Lists order bytewise: by tool or name, ListAll by
// workspace id and then name.
type ToolDriver interface {
	// ToolSettingUpsert inserts p.Setting or on (workspace, tool) rewrites
	// enabled and updated_at.
	ToolSettingUpsert(ctx context.Context, p *ToolSettingUpsertParams) error
	ToolSettingList(ctx context.Context, workspaceID string) ([]ToolSetting, error)

	// MCPServerInsert inserts p.Server, complete (Ciphertext nil when
	// empty).
	MCPServerInsert(ctx context.Context, p *MCPServerInsertParams) error
	MCPServerList(ctx context.Context, workspaceID string) ([]MCPServer, error)
	MCPServerListAll(ctx context.Context) ([]MCPServer, error)
	MCPServerDelete(ctx context.Context, workspaceID, name string) error

	// OpenAPIImportUpsert inserts p.Import, complete, or on (workspace,
	// name) rewrites it but its created_at; it returns the row as stored.
	OpenAPIImportUpsert(ctx context.Context, p *OpenAPIImportUpsertParams) (OpenAPIImport, error)
	OpenAPIImportList(ctx context.Context, workspaceID string) ([]OpenAPIImport, error)
	OpenAPIImportListAll(ctx context.Context) ([]OpenAPIImport, error)
	OpenAPIImportDelete(ctx context.Context, workspaceID, name string) error
}

// ToolSettingUpsertParams is the row ToolSettingUpsert writes.
type ToolSettingUpsertParams struct {
	Setting ToolSetting
}

// MCPServerInsertParams is the row MCPServerInsert writes.
type MCPServerInsertParams struct {
	Server MCPServer
}

// OpenAPIImportUpsertParams is the row OpenAPIImportUpsert writes.
type OpenAPIImportUpsertParams struct {
	Import OpenAPIImport
}

// SkillDriver holds the verbs of Skills. Writes of a skill and its files
// run in one transaction; files read in path order (bytewise), without
// their data except from SkillFileGet.
type SkillDriver interface {
	// SkillInsert inserts p.Skill, complete and stamped, and its files.
	SkillInsert(ctx context.Context, p *SkillWriteParams) error
	// SkillGet returns the skill with its files' paths and sizes.
	SkillGet(ctx context.Context, workspaceID, name string) (Skill, error)
	// SkillList orders by name (bytewise), Files nil.
	SkillList(ctx context.Context, workspaceID string) ([]Skill, error)
	// SkillUpdate rewrites every column but workspace, name and
	// created_at and, when p.Skill.Files is not nil, replaces the files.
	SkillUpdate(ctx context.Context, p *SkillWriteParams) error
	SkillFileGet(ctx context.Context, workspaceID, name, path string) (SkillFile, error)
	// SkillDelete deletes the skill and its files.
	SkillDelete(ctx context.Context, workspaceID, name string) error
}

// SkillWriteParams is the row a skill write stores: Skill complete and
// stamped (each file's Size its len(Data)), Metadata its Metadata as JSON
// (nil when empty).
type SkillWriteParams struct {
	Skill    Skill
	Metadata []byte
}

// WorkerDriver holds the verbs of Workers. Lists order by id, bytewise.
type WorkerDriver interface {
	// WorkerUpsert inserts p.Worker, complete and stamped, or rewrites
	// every column of the row with its id.
	WorkerUpsert(ctx context.Context, p *WorkerUpsertParams) error
	// WorkerGet returns the worker; none is ErrNotFound.
	WorkerGet(ctx context.Context, id string) (Worker, error)
	WorkerList(ctx context.Context) ([]Worker, error)
	// WorkerDelete deletes the row of p.ID when its host and pid are
	// p's; no such row is no error.
	WorkerDelete(ctx context.Context, p *WorkerDeleteParams) error
	// WorkerPrune deletes the rows seen before before and returns how
	// many.
	WorkerPrune(ctx context.Context, before time.Time) (int64, error)
}

// WorkerUpsertParams is the row WorkerUpsert writes (Runs non-nil).
type WorkerUpsertParams struct {
	Worker Worker
}

// WorkerDeleteParams name the row WorkerDelete removes.
type WorkerDeleteParams struct {
	ID, Host string
	PID      int
}
