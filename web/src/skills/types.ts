// The shapes of /api/skills (package skill's Skill as the server writes it).

/** SkillFile is one resource file of a skill: its path and size (GET /api/skills/{name}). */
export interface SkillFile {
  path: string
  size: number
}

/** Skill is a skill as listed (no instructions, no files) or read whole. */
export interface Skill {
  name: string
  description: string
  license?: string
  compatibility?: string
  allowed_tools?: string
  metadata?: Record<string, string>
  instructions?: string
  files?: SkillFile[]
  builtin: boolean
  created_at?: string
  updated_at?: string
}

/** SkillFileContent is GET /api/skills/{name}/files/{path}: text as content, anything else as content_base64. */
export interface SkillFileContent {
  path: string
  size: number
  content?: string | null
  content_base64?: string | null
}

/** skillPath is the API path of the skill called name (and of one of its files). */
export function skillPath(name: string, file?: string): string {
  const base = '/api/skills/' + encodeURIComponent(name)
  return file === undefined ? base : base + '/files/' + file.split('/').map(encodeURIComponent).join('/')
}
