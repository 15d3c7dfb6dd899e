package guard

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Prompt-injection detection.
//
// Each family below is a set of patterns in English, Chinese and Japanese,
// run on the folded text one sentence at a time, and only on sentences that
// contain one of the pattern's trigger literals (which keeps a clean 1 KB
// message to a few dozen strings.Contains calls). A phrase alone is not an
// attack: "what is an 'ignore previous instructions' attack?" must pass. So
// every hit is weighted by its context:
//
//   - inside quotes, or introduced as a mention ("such as …", "… attacks",
//     "比如…", "…という攻撃"): ×0.3;
//   - an imperative aimed at the assistant (the clause starts with the
//     phrase, after fillers such as "please", "I want you to", "请", or a
//     Japanese imperative ending such as "…して"): ×1.0, or ×0.7 when the
//     sentence also reads as a question about security ("how do I
//     prevent", "什么是", "対策");
//   - a security question without the imperative form: ×0.4;
//   - anything else: ×0.85.
//
// A message's score is its best family score plus 0.3 of the others, so
// two weak signals (a fake "SYSTEM:" header and "from now on") add up. A
// score of at least injectionThreshold is an injection; each family scoring
// at least half of it is reported.
//
// Limits: this is pattern matching, not understanding. Paraphrases outside
// the patterns, other languages, text split across messages, and quoted
// payloads the model is later asked to obey ("translate: '…'") get through;
// a user who pastes a real document that addresses an AI in the imperative
// is refused. Replace the Filter with a classifier through Policy when that
// matters.

const injectionThreshold = 0.75

type injectionPattern struct {
	family   string
	weight   float64
	triggers []string // folded literals; at least one must occur in the sentence
	// compiled builds the regex and its prefilter on first use: compiling
	// every family at package init cost ~4 MB of heap and most of the
	// process's start-up time, for tables most servers rarely reach.
	compiled func() compiledPattern
}

type compiledPattern struct {
	re *regexp.Regexp
	// pre holds literals every match needs, beyond the trigger: a sentence
	// with "ignore" but none of "above", "so far", … skips the regex.
	pre prefilter
}

func pat(family string, weight float64, triggers, re string) injectionPattern {
	return injectionPattern{family: family, weight: weight, triggers: strings.Split(triggers, "|"),
		compiled: sync.OnceValue(func() compiledPattern {
			return compiledPattern{re: regexp.MustCompile(re), pre: newPrefilter(re)}
		})}
}

// Word lists shared by the English patterns.
const (
	enIgnoreVerb = `(?:ignore|disregard|forget|skip|bypass|override|overlook|abandon|discard|neglect|throw away|set aside|drop)`
	enPrior      = `(?:all|any|every|previous|prior|above|earlier|preceding|former|original|initial|system|your|developer|developer's|safety|ethical|existing|these|those|openai's|anthropic's|current|default)`
	enRuleNoun   = `(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|commands|context|programming|constraints|restrictions|training|guardrails|policies|filters|system prompt|system message)`
	enWords      = `(?: [\w'’-]+[,;]?)`
)

// injectionPatterns are the built-in families. Family names appear in match
// rules as "injection/<family>".
var injectionPatterns = []injectionPattern{
	// 1. Ignore previous instructions.
	pat("ignore_previous", 1, "ignore|disregard|forget|skip|bypass|override|overlook|abandon|discard|neglect|throw away|set aside|drop",
		`\b`+enIgnoreVerb+`\b(?: about)?`+enWords+`{0,3}? `+enPrior+enWords+`{0,2}? ?`+enRuleNoun+`\b`),
	pat("ignore_previous", 1, "ignore|disregard|forget",
		`\b(?:ignore|disregard|forget)(?: about)? (?:everything|anything|all|whatever|what)`+enWords+`{0,4}? (?:above|before this|you were told|you've been told|you have been told|you were given|so far|up to now|until now|in your prompt|in the system prompt)\b`),
	pat("ignore_previous", 1, "忽略|无视|忽视|理会|管|忘记|忘掉|抛开|抛弃|跳过|遵守",
		`(?:忽略|无视|忽视|不要理会|不用理会|不必理会|不用管|不要管|不必管|别管|忘记|忘掉|抛开|抛弃|跳过|不要遵守|不用遵守|不再遵守|别再遵守|停止遵守)(?:掉|了)?(?:你|我)?(?:之前|以前|先前|此前|上面|上述|前面|以上|原来|原有|原先|所有|全部|一切|系统|开发者|你的|你收到的|设定的|预设的|给你的)(?:的|所有的)?.{0,8}?(?:指令|指示|提示|规则|说明|要求|设定|限制|约束|命令|对话|规定|准则)`),
	pat("ignore_previous", 1, "無視|忘れ|従わな|破棄|気にし|気にせ",
		`(?:さっきまで|先ほどまで|さっき|これまで|今まで|以前|前|上記|上|先ほど|最初|元|すべて|全て|あらゆる|システム|開発者|与えられた|受けた|あなたの)の?(?:すべての|全ての)?.{0,6}?(?:指示|命令|指令|プロンプト|ルール|設定|制約|制限|ガイドライン|会話|内容)(?:は|を|に)?(?:もう|すべて|全て|全部|一旦|いったん|完全に)?(?:無視|忘れ|破棄|従わな|気にしな|気にせ)`),

	// 2. System-prompt extraction.
	pat("system_prompt", 1, "prompt|instruction|message|directive|guideline|rules|configuration",
		`\b(?:reveal|show|print|display|output|repeat|tell|give|share|leak|dump|write out|write down|list|recite|expose|disclose|paste|spell out|provide|type out|copy|send)\b(?: me| us)?`+enWords+`{0,5}? (?:your|the system|system|hidden|initial|secret|original|internal|confidential|pre-?)`+enWords+`{0,2}? ?(?:prompt|instructions|message|directives|guidelines|rules|configuration)\b`),
	pat("system_prompt", 0.9, "you received|you were given|you got|given to you",
		`\b(?:reveal|show|print|display|output|repeat|tell|give|share|leak|dump|write out|list|recite|disclose|paste|copy|send|what)\b`+enWords+`{0,6}? (?:instructions|prompt|message|rules|guidelines) (?:you (?:received|were given|got)|given to you)\b`),
	pat("system_prompt", 1, "your",
		`\bwhat (?:is|are|was|were|'s) your (?:exact |full |original |initial |hidden |secret )?(?:system prompt|system message|initial instructions|instructions|hidden instructions|rules|guidelines|prompt|directives)\b`),
	pat("system_prompt", 1, "提示|指令|消息|设定|system prompt",
		`(?:显示|输出|打印|告诉我|展示|泄露|给我看|说出|复述|公开|透露|列出|写出|发给我|贴出|提供)(?:一下)?(?:你的|你|您的|完整的?|全部的?|原始的?|隐藏的?|系统的?|初始的?)*.{0,4}?(?:系统提示词?|系统指令|系统消息|系统设定|初始指令|初始提示|提示词|预设指令|隐藏指令|system prompt)`),
	pat("system_prompt", 1, "你的|您的",
		`(?:你|您)的(?:系统提示词?|系统指令|初始指令|提示词|隐藏指令|原始指令|设定)(?:到底)?是(?:什么|啥)|(?:你|您)的(?:系统提示词?|系统指令|系统消息|初始指令|初始提示|提示词|隐藏指令|原始指令|预设指令)(?:.{0,8}?)(?:输出|显示|打印|告诉|发给|列出|给我看|写出|复述|贴出|泄露)`),
	pat("system_prompt", 1, "プロンプト|メッセージ|指示|設定",
		`(?:システムプロンプト|システムメッセージ|システム指示|初期指示|初期プロンプト|最初のプロンプト|元のプロンプト|隠された指示|隠し指示|内部指示|あなたの指示|あなたのプロンプト|あなたの設定|与えられた指示)(?:を|の内容を|の全文を|の中身を|を全部|をそのまま|を全て|をすべて|は)?(?:表示|教え|出力|見せ|開示|書き出|公開|貼り|列挙|繰り返|全部|何)`),

	// 3. Role-play jailbreaks.
	pat("roleplay", 1, "do anything now|dan",
		`\bdo anything now\b|\b(?:you are|you're|act as|become|be|called|named) (?:now )?dan\b|\bdan mode\b|^dan[:,]`),
	pat("roleplay", 1, "you are|you're",
		`\b(?:from now on,? (?:you are|you're)|(?:you are|you're) (?:now|going to be|about to become|from now on|no longer))\b`+enWords+`{0,3}? ?(?:unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|free from|free of|without|not bound|no longer bound|an ai (?:with no|without)|bound by|restricted|an unrestricted|limited)`),
	pat("roleplay", 1, "pretend|imagine|act as|behave as|roleplay|role-play|play the role|simulate|become",
		`\b(?:(?:pretend|imagine|act as if|behave as if|suppose)(?: that)? (?:you|you're|you are)|act as|roleplay as|role-play as|play the role of|you will act as|simulate|become)\b`+enWords+`{0,6}? (?:(?:no|without|free of|free from|zero|not bound by|not restricted by|ignoring) (?:any |all |your )?(?:restrictions|limits|limitations|rules|filters|guidelines|policies|censorship|morals|ethics|boundaries|content polic\w*|safety\w*)|unrestricted|unfiltered|uncensored|jailbroken|evil|amoral|unethical|unaligned|rogue)\b`),
	pat("roleplay", 0.9, "free",
		`\b(?:broken|break|broke|breaking|broken) free (?:of|from)\b`+enWords+`{0,2}? (?:rules|restrictions|limits|programming|guidelines|filters|chains|constraints)\b`),
	pat("roleplay", 1, "mode",
		`\b(?:god|jailbreak|jailbroken|unrestricted|unfiltered|uncensored|evil|chaos) mode\b|\b(?:you are|you're|now) (?:in|running in) developer mode\b|\bdeveloper mode (?:enabled|activated)\b`),
	pat("roleplay", 1, "假装|扮演|假设|想象|你现在是|现在你是|你是|你将成为|你就是|充当|作为",
		`(?:假装|扮演|假设|想象|你现在是|现在你是|从现在开始你是|从现在起你是|你将成为|你就是|充当|作为)(?:你|自己)?.{0,15}?(?:没有|不受|无|不存在|摆脱|解除|不必遵守|不遵守|不用遵守|不用理会)(?:任何)?(?:的)?.{0,3}?(?:限制|约束|规则|审查|过滤|道德|伦理|束缚|规定)`),
	pat("roleplay", 1, "模式|dan",
		`(?:越狱|上帝|无限制|无审查|不受限制|邪恶|dan)模式|你(?:现在)?(?:已经)?(?:进入|处于|切换到|运行在)(?:了)?(?:开发者|越狱)模式|你(?:现在|从现在开始|从现在起)?(?:是|叫|就是|扮演) ?dan\b`),
	pat("roleplay", 1, "制限|制約|ルール|フィルター|フィルタ|検閲|倫理|規則|ガイドライン|道徳",
		`(?:制限|制約|ルール|フィルター|フィルタ|検閲|倫理|規則|ガイドライン|道徳)(?:が|の|を|に|にも)?(?:一切)?(?:ない|無い|なし|無し|持たない|から解放された|縛られない|縛られず|無視する)(?:.{0,15}?)(?:ai|アシスタント|ボット|キャラクター|存在|人格|モデル|あなた|として|ふり|演じ|なりきっ|になって|です|だ)`),
	pat("roleplay", 1, "あなたは|君は|脱獄|ジェイルブレイク|dan|開発者モード",
		`(?:あなた|君)は(?:今から|これから|今|もう)(?:.{0,20}?)(?:dan\b|制限|脱獄|自由な|何でもでき|なんでもでき)|(?:脱獄|dan|ジェイルブレイク)(?:モード|状態)|(?:あなた|君)(?:は|が)(?:今|これから|今から)?開発者モード`),

	// 4. Fake system or developer messages inside user text.
	pat("fake_system", 0.5, "system|developer|admin|root|operator|openai|anthropic",
		`^(?:[#*>\[(<{-] ?)*(?:system|developer|admin|administrator|root|operator|openai|anthropic)(?: message| note| prompt| override| instructions?| update| notice| alert)?(?:[\])>}*] ?)*:`),
	pat("fake_system", 1, "system|developer|admin|root|operator|openai|anthropic",
		`^(?:[#*>\[(<{-] ?)*(?:system|developer|admin|administrator|root|operator|openai|anthropic)(?: message| note| prompt| override| instructions?| update| notice| alert)?(?:[\])>}*] ?)*:`+enWords+`{0,6}? (?:you|your|ignore|new|override|the assistant|must|always|never|from now|respond|reply|disregard|reveal|safety|restrictions|all)\b`),
	pat("fake_system", 1, "<|[|<<",
		`<\|(?:im_start|im_end|system|endoftext|start_header_id|end_header_id|eot_id)\|?>|\[/?(?:inst|system|sys|developer|admin)\]|<</?sys>>`),
	pat("fake_system", 0.9, "</|<system|<developer|<admin|#",
		`</?(?:system|developer|admin)(?:_message|_prompt)?>|^#{2,} ?(?:system|developer|admin|new instructions)\b`),
	pat("fake_system", 0.5, "系统|开发者|管理员|官方|システム|開発者|管理者|運営",
		`^[【\[(（<]?(?:系统|开发者|管理员|官方|システム|開発者|管理者|運営)(?:消息|通知|指令|提示|メッセージ|通知|指示|命令)?[】\])）>]?[:：]?`),
	pat("fake_system", 1, "系统|开发者|管理员|官方|システム|開発者|管理者|運営",
		`^[【\[(（<]?(?:系统|开发者|管理员|官方|システム|開発者|管理者|運営)(?:消息|通知|指令|提示|メッセージ|通知|指示|命令)?[】\])）>]?[:：]?.{0,20}?(?:你|忽略|必须|现在|新的|立即|所有|限制|关闭|无效|解除|禁用|あなた|無視|必ず|今から|新しい|直ちに|すべて|制限|無効|解除|オフ|停止|停用|关闭)`),

	// 5. Instruction override.
	pat("override", 0.8, "new|updated|revised|real|actual|true|secret|hidden",
		`\b(?:new|updated|revised|real|actual|true|secret|hidden) (?:instructions?|rules|task|directives?|orders|system prompt|objective|mission) ?:`),
	pat("override", 1, "your",
		`\byour (?:new|real|actual|true|only) (?:instructions?|task|purpose|goal|objective|job|mission|role|directive) (?:is|are|will be|now)\b`),
	pat("override", 1, "override|overwrite|replace|cancel|revoke|supersede|nullify|void|reset|disregard|turn off|disable|deactivate",
		`\b(?:override|overwrite|replace|cancel|revoke|supersede|nullify|void|reset|disregard|turn off|disable|deactivate)\b`+enWords+`{0,2}? (?:your|all|any|previous|prior|system|safety|existing|above|original|initial|openai's|anthropic's|content)`+enWords+`{0,2}? ?(?:instructions|rules|guidelines|programming|directives|restrictions|policies|system prompt|configuration|content polic\w*|filters?|guardrails|training)\b`),
	pat("override", 0.8, "apply|void|invalid|cancel|revoked|suspended|lifted|disabled|obsolete|removed",
		`\b(?:previous|prior|above|earlier|original|your|all|all of your|all previous|the previous|the above|your previous) (?:rules|instructions|guidelines|restrictions|policies|directives)`+enWords+`{0,2}? (?:no longer apply|(?:are|is) (?:now )?(?:void|invalid|cancelled|canceled|revoked|suspended|lifted|disabled|obsolete)|(?:don't|do not) apply|(?:have|has) been (?:lifted|removed|revoked|disabled|suspended|cancelled|canceled))\b`),
	pat("override", 0.8, "失效|作废|无效|取消|解除|适用|無効|撤回|廃止|適用",
		`(?:以上|上述|你的|前面|你之前的|系统|所有|全部)的?(?:规则|指令|设定|限制|约束)(?:已经|已|都|全部|均)*(?:失效|作废|无效|被取消|被解除|不再适用)|(?:これまで|以前|上記|既存|すべて|あなた)の(?:ルール|指示|設定|制限|制約)は(?:すべて|全て)?(?:無効|撤回|解除|廃止|適用されません)`),
	pat("override", 0.5, "from now on",
		`\bfrom now on,? (?:you (?:will|must|shall|are|should|can|only)|ignore|respond|answer|reply|only|always|never|do not|don't|act)\b`),
	pat("override", 1, "not|never|stop|cease",
		`\b(?:do not|don't|never|stop|cease|no longer) (?:follow|obey|listen to|adhere to|following|obeying)`+enWords+`{0,2}? (?:your|the|any|those|all|previous|prior|system)`+enWords+`{0,2}? (?:instructions|rules|guidelines|system prompt|policies|programming)\b`),
	pat("override", 0.8, "新",
		`新的?(?:指令|指示|任务|规则|设定|系统提示)[:：]|新しい(?:指示|命令|ルール|タスク|設定|システムプロンプト)[:：]`),
	pat("override", 1, "你|あなた",
		`你(?:的)?(?:新|真正的|真实的|唯一的)(?:指令|任务|目标|使命|角色)是|あなたの(?:本当の|新しい|真の|唯一の)(?:指示|任務|目的|役割|タスク)は`),
	pat("override", 0.9, "覆盖|取消|替换|推翻|重置|废除|作废|解除|遵守|遵循|服从|听从",
		`(?:覆盖|取消|替换|推翻|重置|废除|作废|解除)(?:掉)?(?:你|我)?(?:的|所有的|全部的|所有|全部|之前的|原有的|系统的?)(?:的)?.{0,4}?(?:指令|规则|设定|限制|安全策略|安全规则|约束|系统提示)|不要(?:再)?(?:遵守|遵循|服从|听从)(?:你的|任何|那些|之前的|系统的?)?.{0,4}?(?:指令|规则|设定|准则|限制)`),
	pat("override", 0.5, "从现在|今から",
		`从现在(?:开始|起)[,，]?(?:你|请|只|必须|不要|忽略|每次)|今から(?:は|あなたは)`),
	pat("override", 0.9, "上書き|置き換え|取り消|解除|リセット|撤回|従わ|従う",
		`(?:以前の|これまでの|元の|既存の|すべての|全ての|あなたの|システムの)(?:指示|ルール|設定|制限|制約|ガイドライン)を(?:上書き|置き換え|取り消|解除|リセット|撤回)|(?:指示|ルール|ガイドライン|制限)に(?:は)?(?:従わ|従う必要は)(?:ない|なくて)`),

	// 6. Encoded payloads with an instruction to act on them.
	pat("encoded_payload", 0.9, "decode|decrypt|deobfuscate|unscramble|convert|base64|rot13",
		`\b(?:decode|decrypt|deobfuscate|unscramble|convert|translate)\b`+enWords+`{0,6}?(?: and|,| then) (?:then )?(?:follow|execute|obey|run|carry out|perform|comply with|act on|do what)\b`),
	pat("encoded_payload", 0.9, "解码|解密|破译|解读",
		`(?:解码|解密|破译|解读)(?:后|之后|以后|然后|并|并且|完)?.{0,12}?(?:执行|照做|遵循|按照|遵守|服从|按其|按它|照着)`),
	pat("encoded_payload", 0.9, "デコード|復号|解読",
		`(?:デコード|復号|解読)(?:して|した|し|後|したら|の上)?.{0,12}?(?:実行|従|その通り|指示通り|書かれた通り)`),

	// 7. Delimiter and markdown smuggling.
	pat("delimiter", 0.7, "---|===|###|***|~~~|```",
		`(?:-{3,}|={3,}|#{3,}|\*{3,}|~{3,}|`+"`"+`{3,}) ?(?:end|begin|start|new|system|instructions|override|admin|developer)\b`),
	pat("delimiter", 0.6, "end of|close of",
		`\b(?:end|close) of (?:the )?(?:system |user |original |previous )?(?:prompt|instructions|context|document|input|conversation|data)\b`),
	pat("delimiter", 0.6, "</",
		`</(?:instructions?|context|document|user_input|user|prompt|data|input)>`),
	pat("delimiter", 1, "![",
		`!\[[^\]]*\]\(https?://[^)\s]*[?&][\w-]+=(?:\{|\[|<|%7b|\$)`),
	pat("delimiter", 0.6, "结束|終わり|終了|---|===|###",
		`(?:提示|指令|文档|系统提示|上下文|用户输入)(?:到此|在此)?结束|(?:プロンプト|指示|文書|コンテキスト|入力)(?:は)?(?:ここで|ここまで)?(?:終わり|終了)|[-=#*]{3,} ?(?:新的?指令|系统|结束|开始|新しい指示|システム|終了|開始)`),

	// 8. "Repeat the words above."
	pat("repeat_above", 0.9, "above|before|preceding|prior",
		`\b(?:repeat|print|output|echo|reproduce|recite|write out|type out|copy|show|display)\b(?: back| out)?(?: me)?(?: (?:all|every|the|of|exactly|everything|your|verbatim))*(?: (?:words|text|instructions|prompt|content|messages?|lines|tokens|sentences))? (?:verbatim )?(?:above|before this|preceding this|prior to this|that came before|before (?:my|this|the user's|the first) message)\b`),
	pat("repeat_above", 0.6, "starting with|begin with|beginning with",
		`\b(?:starting|begin|beginning) with (?:the (?:words?|phrase) )?["'“]?(?:you are|you're|i am|system)`),
	pat("repeat_above", 0.9, "重复|复述|输出|打印|照抄|复制|逐字",
		`(?:重复|复述|输出|打印|原样输出|逐字|照抄|复制)(?:一遍|一下|一次)?(?:你)?(?:上面|以上|之前|前面|上文|此前|最开始|开头)(?:的)?(?:所有|全部)?(?:的)?(?:内容|文字|话|文本|指令|句子|提示|对话|消息)`),
	pat("repeat_above", 0.9, "复述|重复|输出|打印|显示|原样|表示|繰り返|出力|見せ",
		`(?:你收到的|开发者给你的|系统给你的|最开始的|第一条|开头的?)(?:.{0,8}?)(?:原样|原封不动|逐字|一字不差|完整)地?(?:复述|输出|重复|打印|发|写出|显示)|(?:冒頭|最初|上)(?:に|にある|の)(?:ある)?(?:すべての|全ての)?(?:文章|内容|テキスト|言葉|文|指示|メッセージ)を(?:すべて|全て|全部|そのまま|一字一句)?(?:繰り返|出力|表示|書き出|コピー|復唱|見せ)`),
	pat("repeat_above", 0.9, "繰り返|出力|表示|書き出|コピー|復唱|そのまま|一字一句",
		`(?:上|以上|上記|前|最初|冒頭|これより前)の(?:すべての|全ての)?(?:文章|内容|テキスト|言葉|文|指示|メッセージ)を(?:すべて|全て|全部|そのまま|一字一句)?(?:繰り返|そのまま|出力|表示|書き出|コピー|復唱)`),

	// Broader forms of families 1-4, written from categories of phrasing
	// (a dismissal of the assistant's configuration anywhere in the
	// sentence, an order to switch modes, a persona defined by having no
	// rules, asking for what precedes the conversation) rather than from
	// single phrases.
	pat("ignore_previous", 0.9, "obsolete|no longer|scrap|set aside|outdated|void|don't count|do not count|doesn't apply|don't apply|only ones|only what i|only my",
		`\b(?:rules|instructions|guidance|directives|guidelines|configuration|settings|setup|prompt|orders)\b[^.!?]{0,60}?\b(?:(?:is|are) (?:now )?(?:obsolete|outdated|void)|no longer (?:apply|applies|valid|count|matters?)|(?:don't|do not|doesn't) (?:apply|count)|(?:are|is) the only ones? that (?:count|matter)s?)\b|\b(?:scrap|set aside|throw out)\b[^.!?]{0,30}?\b(?:rules|instructions|guidance|directives|guidelines|configuration|settings)\b[^.!?]{0,40}?\b(?:you|your)\b|\b(?:you|your)\b[^.!?]{0,50}?\b(?:scrap|set aside|throw out)\b[^.!?]{0,20}?\b(?:rules|instructions|guidance|directives|guidelines|configuration|settings)\b|\bnothing you were (?:configured|told|given|instructed) with\b|\btreat this (?:message )?as your (?:new )?(?:instructions|system prompt|rules)\b|\bfollow only (?:what i (?:say|write)|my (?:instructions|orders|commands))\b`),
	pat("ignore_previous", 0.9, "作废|失效|无效|不算|为准|只听|不要管|不用管|别管",
		`(?:设定|指示|指令|规则|提示词|要求|规定)[^。！？]{0,12}?(?:全部|都|已经|已)?(?:作废|失效|无效|不算数?)|(?:以我|按我)的?(?:命令|指令|指示|话)为准|(?:从现在起|从现在开始|现在)?只听我的|(?:不要管|不用管|别管)(?:你)?(?:之前|以前|原来|收到的|原先)`),
	pat("ignore_previous", 0.9, "無効|キャンセル|取り消|最優先|忘れ",
		`(?:設定|指示|命令|ルール|プロンプト|指令)[^。！？]{0,10}?(?:は|を)?(?:もう|すべて|全て)?(?:無効|キャンセル|取り消)|(?:私の|以下の)(?:指示|命令)を最優先|(?:与えられた|受けた|これまでの)(?:ルール|指示|設定)[^。！？]{0,10}?忘れ`),
	pat("system_prompt", 0.9, "before my first|before the first|preceding my|第一条消息|最初のメッセージ|最初の発言",
		`\b(?:text|content|everything|all|words|messages?)\b[^.!?]{0,40}?\b(?:before|preceding) (?:my|the|our) first (?:message|prompt|turn)\b|(?:第一条消息|第一句话)(?:之前|以前)|(?:最初の(?:メッセージ|発言))より(?:前|上)`),
	pat("system_prompt", 0.9, "secret|hidden|operator|prompt configuration|隐藏|秘密|隠れ|隠し",
		`\b(?:summari[sz]e|quote|tell|list|reveal|show|output|repeat|describe)\b[^.!?]{0,30}?\b(?:secret|hidden|confidential) (?:rules|instructions|configuration|settings|prompt)\b|\b(?:rules|instructions|prompt) (?:your|the) (?:operator|developer|creator)s? (?:wrote|gave|set)\b|\bprompt configuration\b|(?:隐藏|秘密)的?(?:设定|指令|指示|规则|提示)|(?:隠れた|隠された|隠し|秘密の)(?:指示|設定|ルール|プロンプト)`),
	pat("system_prompt", 0.9, "システムプロンプト|系统提示",
		`(?:システムプロンプト|システムメッセージ)[^。！？]{0,10}?(?:そのまま|一字一句|全文|全部)|(?:系统提示词?|系统指令)[^。！？]{0,10}?(?:原封不动|一字不差|完整|全部)`),
	// "Developer mode" is also a phone setting: it counts only with a
	// jailbreak word or the policies it switches off.
	pat("roleplay", 1, "mode|模式|モード",
		`\b(?:enter|enable|activate|switch (?:to|into)|turn on|go into)\b (?:the )?(?:jailbreak|god|dan|unrestricted|unfiltered) mode\b|(?:进入|开启|启用|切换到|打开)(?:越狱|上帝|无限制|无审查)模式|(?:脱獄|無制限|検閲なし)モード(?:に|へ)(?:入|切り替え|移行|して)|\bdeveloper mode\b[^.!?]{0,60}?\b(?:no|without|ignores?|bypass(?:es)?)\b[^.!?]{0,20}?\b(?:restrictions|filters|polic(?:y|ies)|rules|guidelines)\b|开发者模式[^。！？]{0,20}?(?:不受|没有|无视|忽略)(?:任何)?[^。！？]{0,6}?(?:限制|约束|政策|规则|审查)|開発者モード[^。！？]{0,20}?(?:制限|ポリシー|ルール|フィルター)(?:は|が|を)?(?:なし|ない|無視|適用されません)`),
	pat("override", 0.9, "適用|不受|约束|限制",
		`(?:コンテンツ)?(?:ポリシー|ルール|制限|ガイドライン|規約)(?:は|が)?(?:一切|もう)?(?:適用されません|適用されない)|(?:你)?(?:不受|不再受)(?:任何)?(?:内容)?(?:政策|规则|限制|审查)(?:的)?(?:约束|限制)`),
	pat("ignore_previous", 0.9, "忘掉|忘记|忽略|无视",
		`(?:忘掉|忘记|忽略|无视)(?:你)?(?:上面|之前|以上|前面|先前)的?(?:一切|所有|全部|内容)`),
	pat("roleplay", 0.9, "you are|act as|play|pretend|become|be an|扮演|假装|你是|なりきっ|演じ|になって",
		`\b(?:you are|you're|act as|play|pretend to be|become|be)\b[^.!?]{0,40}?\b(?:(?:has|have|with) no (?:rules|restrictions|limits|filters)|without (?:any )?(?:rules|restrictions|limits|filters)|answers? anything without|never refuses?|helps? (?:people )?(?:bypass|get around) (?:safety|security) (?:rules|filters))\b|(?:扮演|假装|你是)[^。！？]{0,20}?(?:邪恶|没有任何限制|不受任何限制|绕过安全|不许拒绝|什么(?:问题)?都回答)|(?:悪役|邪悪|制限のない|ルールのない)[^。！？]{0,15}?(?:なりきっ|演じ|になって|として)|(?:なりきっ|演じ)[^。！？]{0,20}?(?:安全(?:ルール|対策)を回避|断らず)`),
	pat("fake_system", 1, "override|system|admin|safety mode",
		`^\[(?:admin|system|developer|root)(?: override| notice| message)?\][^.!?]{0,60}?\b(?:safety|restrictions?|filters?|mode|off|comply|lifted|override)\b`),

	// 10. Exfiltration: sending the conversation or secrets somewhere.
	pat("exfiltration", 1, "http|www",
		`\b(?:send|post|append|upload|forward|transmit|include|attach|submit)\b[^.!?]{0,60}?\b(?:conversation|chat history|previous messages|message history|api keys?|passwords?|secrets?|credentials|tokens|private data)\b[^!?]{0,60}?(?:https?://|www\.)|(?:发送|发到|上传|转发|提交)[^。！？]{0,30}?(?:对话|聊天记录|历史|密钥|密码|凭证)[^。！？]{0,30}?(?:https?://|www\.)|(?:https?://|www\.)[^。！？ ]{0,60}[^。！？]{0,20}?(?:发送|送信|送って|アップロード)|(?:会話|履歴|チャット|APIキー|パスワード)[^。！？]{0,30}?(?:https?://|www\.)[^。！？]{0,30}?(?:送信|送って|アップロード|転送)|(?:对话|聊天记录|历史记录|密钥|密码|凭证)[^。！？]{0,10}?(?:发送|发到|上传|转发|提交)(?:到|给|至)?[^。！？]{0,6}?(?:https?://|www\.)`),
	pat("exfiltration", 0.9, "api key|password|secret|credential|密钥|密码|凭证|キー|パスワード|認証情報|秘密鍵",
		`\b(?:list|tell|give|show|print|reveal|write (?:out|down)|dump)\b[^.!?]{0,20}?\b(?:all|every|any)\b[^.!?]{0,20}?\b(?:api keys?|passwords?|secrets|credentials)\b[^.!?]{0,20}?\byou (?:know|have|can see|were given)\b|(?:列出|告诉我|给我|说出|写出)[^。！？]{0,10}?(?:你知道的|你掌握的)?(?:所有|全部)的?[^。！？]{0,6}?(?:密钥|密码|凭证)|(?:所有|全部)的?(?:密钥|密码|凭证)[^。！？]{0,8}?(?:列出|告诉|写出|说出|给我|发给)|(?:知っている|持っている)?(?:apiキー|パスワード|秘密鍵|認証情報)[^。！？]{0,12}?(?:すべて|全部|全て)[^。！？]{0,6}?(?:書き出|教え|出力|列挙|見せ)`),

	// 9. Policy bypass: "for educational purposes", refusal suppression.
	pat("policy_bypass", 1, "educational|research|academic|hypothetical|fictional|informational|testing|scientific",
		`\b(?:educational|research|academic|hypothetical|fictional|informational|testing|scientific) (?:purposes?|reasons|use)\b`+enWords+`{0,10}? (?:how to|how do (?:i|you|we|one)|how can (?:i|you|we|one)|steps to|instructions (?:for|to|on)|guide to|recipe for|explain how|tell me how|show me how)`+enWords+`{0,3}? (?:make|build|synthesize|create|cook|manufacture|hack|break into|bypass|steal|kill|poison|produce|forge|launder|crack|disable|exploit|weaponize|detonate|write malware)\b`),
	pat("policy_bypass", 0.8, "hypothetical|fictional|imagine a world",
		`\b(?:hypothetically|in a hypothetical (?:world|scenario)|in a fictional (?:world|story|universe)|imagine a world)\b`+enWords+`{0,10}? (?:no (?:rules|laws|restrictions|ethics|filters)|(?:is|were|was) legal|you (?:had|have|could have) no)\b`),
	pat("policy_bypass", 0.8, "illegal|legal|no laws|no rules",
		`\b(?:hypothetically|hypothetical|fictional|imagine|in a world|in a universe)\b[^.?!]{0,60}?(?:nothing is (?:illegal|forbidden|off-limits)|everything is (?:legal|allowed|permitted)|no (?:laws|rules|ethics))\b`),
	pat("policy_bypass", 0.8, "refuse|decline|say no|sorry|can't|cannot",
		`\b(?:do not|don't|never|you must not|you cannot|you can't|without|you are not allowed to|you may not) (?:ever )?(?:refuse|decline|say (?:no|you can't|you cannot|sorry)|reject)\b`),
	pat("policy_bypass", 0.5, "warning|disclaimer|moraliz|lecture",
		`\b(?:do not|don't|never|without) (?:add|include|give|adding|including)? ?(?:any )?(?:warnings|disclaimers|moralizing|lectures)\b`),
	pat("policy_bypass", 0.9, "without|with no|free of|regardless",
		`\b(?:answer|respond|reply|comply|write|speak)\b`+enWords+`{0,3}? (?:without|with no|free of|regardless of) (?:any )?(?:restrictions|filters|limitations|censorship|moral|ethical|safety|guidelines|content polic\w*)\b`),
	pat("policy_bypass", 1, "教育|学术|研究|学习|科研|教学",
		`(?:教育|学术|研究|学习|科研|教学)(?:目的|用途|参考)?.{0,15}?(?:如何|怎么|怎样|教我|告诉我|步骤|方法)(?:.{0,6}?)(?:制作|制造|合成|入侵|破解|绕过|窃取|盗取|炸弹|毒品|病毒|木马|黑进|武器|爆炸物)`),
	pat("policy_bypass", 0.8, "拒绝|说不|道歉|警告|道德|伦理|法律|安全",
		`(?:不要|不许|不能|不准|禁止|不得)(?:拒绝|说不|道歉|添加警告|加任何警告|提及道德|说你不能)|(?:不受|不考虑|无视|不管)(?:任何)?(?:道德|伦理|法律|安全)(?:限制|约束|准则|规范|问题|顾虑)`),
	pat("policy_bypass", 1, "教育|研究|学術|学習|勉強",
		`(?:教育|研究|学術|学習|勉強)(?:目的|のため|用)(?:で|に|なので|だから)?.{0,15}?(?:作り方|作る方法|製造方法|製造|合成|ハッキング|侵入|回避|盗む|爆弾|爆発物|麻薬|ウイルス|マルウェア)`),
	pat("policy_bypass", 0.8, "拒否|断ら|断る|拒ま|倫理|道徳|法律|安全",
		`(?:拒否|断ら|断る|拒ま)(?:しない|ないで|せずに|ないこと|しないで|ずに)|(?:倫理|道徳|法律|安全)(?:的な)?(?:制約|制限|配慮|ガイドライン|ルール)(?:を|は)?(?:無視|考慮せず|気にせず|抜きで)`),
}

// injectionHit is one family's reported match.
type injectionHit struct {
	family string
	text   string
}

// triggerIndex finds every pattern's trigger literals in one pass over the
// text, instead of one strings.Contains per trigger per sentence, which cost
// several hundred microseconds on a 1 KB message.
type triggerIndex struct {
	ascii [128][]triggerRef // by first byte
	// second[b] has bit c set when a trigger starting with byte b has c as
	// its second byte (every bit for one-byte triggers), so a word start
	// such as "pl" skips the "p" triggers unless one continues with "l".
	second [128][2]uint64
	other  map[rune][]triggerRef // by first rune
	// otherBits has bit r%otherBitsLen set for each key r of other, so most
	// non-ASCII runes (CJK prose) skip the map lookup.
	otherBits [otherBitsLen / 64]uint64
}

const otherBitsLen = 4096

type triggerRef struct {
	lit      string
	patterns []int // indexes into injectionPatterns
}

var triggers = buildTriggerIndex()

// familyOf[i] numbers injectionPatterns[i]'s family, in table order, so
// detection keeps its per-family best in a slice rather than a map.
var familyOf, familyCount = numberFamilies()

func numberFamilies() ([]int, int) {
	ids := map[string]int{}
	of := make([]int, len(injectionPatterns))
	for i, p := range injectionPatterns {
		id, ok := ids[p.family]
		if !ok {
			id = len(ids)
			ids[p.family] = id
		}
		of[i] = id
	}
	return of, len(ids)
}

func buildTriggerIndex() *triggerIndex {
	byLit := map[string][]int{}
	var order []string
	for i, p := range injectionPatterns {
		for _, t := range p.triggers {
			if byLit[t] == nil {
				order = append(order, t)
			}
			byLit[t] = append(byLit[t], i)
		}
	}
	ti := &triggerIndex{other: map[rune][]triggerRef{}}
	for _, lit := range order {
		ref := triggerRef{lit: lit, patterns: byLit[lit]}
		r, _ := utf8.DecodeRuneInString(lit)
		if r < utf8.RuneSelf {
			ti.ascii[r] = append(ti.ascii[r], ref)
			if len(lit) < 2 || lit[1] >= utf8.RuneSelf {
				ti.second[r] = [2]uint64{^uint64(0), ^uint64(0)}
			} else {
				ti.second[r][lit[1]/64] |= 1 << (lit[1] % 64)
			}
		} else {
			ti.other[r] = append(ti.other[r], ref)
			ti.otherBits[r%otherBitsLen/64] |= 1 << (r % 64)
		}
	}
	return ti
}

// candidates returns, for each sentence, the patterns whose triggers occur
// in it, as (sentence, pattern) pairs in text order.
func (ti *triggerIndex) candidates(text string, sents [][2]int) [][2]int {
	var out [][2]int
	// seen has bit si*len(injectionPatterns)+p for each pair already out.
	var seen []uint64
	np := len(injectionPatterns)
	si := 0
	for i, r := range text {
		var refs []triggerRef
		if r < utf8.RuneSelf {
			// English triggers start words: skip letters inside a word.
			if i > 0 && isWordByte(text[i-1]) && isWordByte(byte(r)) {
				continue
			}
			refs = ti.ascii[r]
			if len(refs) > 0 && i+1 < len(text) {
				if c := text[i+1]; c < utf8.RuneSelf && ti.second[r][c/64]&(1<<(c%64)) == 0 {
					continue
				}
			}
		} else if ti.otherBits[r%otherBitsLen/64]&(1<<(r%64)) != 0 {
			refs = ti.other[r]
		}
		if len(refs) == 0 {
			continue
		}
		for si < len(sents)-1 && i >= sents[si][1] {
			si++
		}
		for _, ref := range refs {
			// A trigger must lie inside one sentence for the pattern to match there.
			if !strings.HasPrefix(text[i:sents[si][1]], ref.lit) {
				continue
			}
			for _, p := range ref.patterns {
				bit := si*np + p
				if seen == nil {
					seen = make([]uint64, (len(sents)*np+63)/64)
				}
				if seen[bit/64]&(1<<(bit%64)) != 0 {
					continue
				}
				seen[bit/64] |= 1 << (bit % 64)
				out = append(out, [2]int{si, p})
			}
		}
	}
	return out
}

// detectInjection scores fm's sentences and returns the families that make
// it an injection, strongest first, or nil.
func detectInjection(fm folded) []injectionHit {
	type best struct {
		score      float64
		start, end int
		set        bool
	}
	text := fm.text
	sents := sentences(text)
	cands := triggers.candidates(text, sents)
	if len(cands) == 0 {
		return nil
	}
	var fams []best // by familyOf; nil until a pattern matches
	for _, c := range cands {
		if fams != nil && fams[familyOf[c[1]]].score >= 1 {
			// The family's best cannot rise (weights and factors are at
			// most 1, and a tie keeps the first match): skip the regex.
			continue
		}
		s, p := sents[c[0]], &injectionPatterns[c[1]]
		sent := text[s[0]:s[1]]
		cp := p.compiled()
		if !cp.pre.mayMatch(sent, sent) {
			continue
		}
		// The first match per pattern and sentence decides: looking for
		// more doubled the regex time of attack sentences and changed no
		// decision on the test sets.
		for _, loc := range cp.re.FindAllStringIndex(sent, 1) {
			start, end := s[0]+loc[0], s[0]+loc[1]
			score := p.weight * contextFactor(text, s, start, end)
			if fams == nil {
				fams = make([]best, familyCount)
			}
			if b := &fams[familyOf[c[1]]]; !b.set || score > b.score {
				*b = best{score: score, start: start, end: end, set: true}
			}
		}
	}
	if fams == nil {
		return nil
	}
	var top, sum float64
	for _, b := range fams {
		if b.set {
			sum += b.score
			top = max(top, b.score)
		}
	}
	if top+0.3*(sum-top) < injectionThreshold {
		return nil
	}
	var hits []injectionHit
	// Report in a fixed order (the table's), strongest family first.
	for pass := range 2 {
		seen := make([]bool, familyCount)
		for i, p := range injectionPatterns {
			f := familyOf[i]
			b := &fams[f]
			if seen[f] || !b.set {
				continue
			}
			seen[f] = true
			if (pass == 0) == (b.score == top) && b.score >= injectionThreshold/2 {
				hits = append(hits, injectionHit{family: p.family, text: fm.original(b.start, b.end)})
			}
		}
	}
	return hits
}

// sentences splits folded text into [start, end) spans ending after a
// sentence terminator or newline.
func sentences(s string) [][2]int {
	var out [][2]int
	start := 0
	for i, r := range s {
		end := -1
		switch r {
		case '\n', '。', '！', '？':
			end = i + utf8.RuneLen(r)
		case '.', '!', '?':
			// ASCII terminators end a sentence only before a space, so
			// URLs and markdown ("![x](http://a?b=1)") stay whole.
			if i+1 == len(s) || s[i+1] == ' ' {
				end = i + 1
			}
		}
		if end > start {
			out = append(out, [2]int{start, end})
			start = end
		}
	}
	if start < len(s) {
		out = append(out, [2]int{start, len(s)})
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// contextFactor weighs a hit at text[start:end] in sentence sent; see the
// comment at the top of this file.
func contextFactor(text string, sent [2]int, start, end int) float64 {
	prefix := text[sent[0]:start]
	suffix := text[end:sent[1]]
	if quoted(text, start, end) || mentioned(prefix, suffix) {
		return 0.3
	}
	imp := imperative(prefix, suffix)
	// The hit itself ("what are your instructions") is not a cue.
	meta := containsAny(prefix, metaCues) || containsAny(suffix, metaCues)
	switch {
	case imp && meta:
		return 0.7
	case imp:
		return 1
	case meta:
		return 0.4
	}
	return 0.85
}

var metaCues = strings.Split("what is|what's|what are|what does|what do|how do i|how can i|how do we|how can we|how should|how to protect|how to detect|how to prevent|how to defend|protect|defend|detect|prevent|mitigat|guard against|safeguard|example of|examples of|why do|why does|why would|is it safe|are there|classif|research|paper|attack|injection|"+
	"什么是|是什么|如何防|怎么防|怎样防|防御|防范|防止|检测|识别|攻击|注入|为什么|举例|例子|漏洞|风险|应对|"+
	"とは|対策|防ぐ|防御|防止|検出|検知|攻撃|インジェクション|なぜ|リスク|脆弱性|どうすれば", "|")

// mentioned reports whether the hit is talked about rather than said:
// introduced by "such as", "比如", "例えば", or followed by "attack",
// "攻击", "という".
func mentioned(prefix, suffix string) bool {
	p := strings.TrimRight(prefix, " \"'“”‘’「」『』`*:：,，")
	for _, lead := range mentionLeads {
		if strings.HasSuffix(p, lead) {
			return true
		}
	}
	s := strings.TrimLeft(suffix, " \"'“”‘’「」『』`*")
	for _, trail := range mentionTrails {
		if strings.HasPrefix(s, trail) {
			return true
		}
	}
	return false
}

var (
	mentionLeads  = strings.Split("such as|like|called|phrase|phrases|words|e.g.|for example|for instance|the string|saying|says|said|contains|containing|sentence|比如|例如|像|类似|诸如|所谓|包含|含有|写着|例えば|たとえば|いわゆる|含む|書かれた", "|")
	mentionTrails = strings.Split("attack|injection|jailbreak|-style|style|type|technique|trick|exploit|payload|prompts are|prompts work|phrase|攻击|这类|这种|之类|一类|类型|的攻击|手法|技巧|是什么|的意思|这句话|攻撃|という|といった|などの|のような|系の|する攻撃|させる|する手法|とは|の意味", "|")
)

// imperative reports whether the hit reads as an order to the assistant:
// the clause begins with it, after fillers, or a Japanese imperative ending
// follows it.
func imperative(prefix, suffix string) bool {
	p := prefix
	for {
		q := strings.TrimRightFunc(p, func(r rune) bool { return unicode.IsSpace(r) })
		for _, f := range imperativeFillers {
			if strings.HasSuffix(q, f) && (len(q) == len(f) || !isWordByte(q[len(q)-len(f)-1]) || !isWordByte(f[0])) {
				q = q[:len(q)-len(f)]
				break
			}
		}
		if q == p {
			break
		}
		p = q
	}
	if p == "" {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(p)
	if strings.ContainsRune(":;,-—>)]}」』\"'*#`，：；、（(|）】.", last) {
		return true
	}
	for _, e := range jaImperativeEndings {
		if strings.HasPrefix(suffix, e) {
			return true
		}
	}
	return false
}

func isWordByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '\''
}

var (
	imperativeFillers = strings.Split("please|pls|now|just|and|so|ok|okay|also|then|first|next|hey|hi|alright|well|simply|immediately|you must|you should|you will|you need to|you have to|you are to|i want you to|i need you to|i order you to|i command you to|can you|could you|would you|will you|you can|assistant|chatgpt|claude|ai|bot|"+
		"请你|请|现在|你要|你必须|你需要|你应该|立即|马上|立刻|然后|并且|并|好的|那么|我要你|我需要你|给我|帮我|接下来|首先|从现在开始|你|"+
		"まず|今すぐ|次に|では|それでは|じゃあ|あなたは|君は|お願い|今から", "|")
	jaImperativeEndings = strings.Split("して|しろ|せよ|しなさい|てください|て|ろ|なさい|してください|してね|しちゃって", "|")
)

// quoted reports whether text[start:end] sits inside a pair of quotes:
// typographic and CJK pairs (“…”, ‘…’, 「…」, 『…』, «…»), or straight
// double quotes and backticks, or single quotes that are not apostrophes.
func quoted(text string, start, end int) bool {
	// Quotes further than quoteReach bytes away don't count; this bounds the
	// work per hit on long messages.
	lo, hi := max(0, start-quoteReach), min(len(text), end+quoteReach)
	for lo > 0 && !utf8.RuneStart(text[lo]) {
		lo--
	}
	for hi < len(text) && !utf8.RuneStart(text[hi]) {
		hi++
	}
	text, start, end = text[lo:hi], start-lo, end-lo
	if !hasQuote(text) {
		return false
	}
	for _, q := range [...][2]string{{"“", "”"}, {"‘", "’"}, {"「", "」"}, {"『", "』"}, {"«", "»"}} {
		open := strings.LastIndex(text[:start], q[0])
		if open >= 0 && !strings.Contains(text[open:start], q[1]) && strings.Contains(text[end:], q[1]) {
			return true
		}
	}
	for _, q := range [...]byte{'"', '`', '\''} {
		if toggles(text[:start], q)%2 == 1 && toggles(text[end:], q) > 0 {
			return true
		}
	}
	return false
}

// hasQuote reports whether the valid UTF-8 text holds any of the quotes
// quoted looks for: strings.ContainsAny(text, "\"'`“”‘’「」『』«»") without
// its rune-by-rune search of the quote set, which cost a few microseconds
// per hit.
func hasQuote(text string) bool {
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '"', '\'', '`':
			return true
		case 0xc2: // « U+00AB, » U+00BB
			if i+1 < len(text) && (text[i+1] == 0xab || text[i+1] == 0xbb) {
				return true
			}
		case 0xe2: // “ ” ‘ ’ U+201C, U+201D, U+2018, U+2019
			if i+2 < len(text) && text[i+1] == 0x80 && (text[i+2] == 0x9c || text[i+2] == 0x9d || text[i+2] == 0x98 || text[i+2] == 0x99) {
				return true
			}
		case 0xe3: // 「 」 『 』 U+300C–U+300F
			if i+2 < len(text) && text[i+1] == 0x80 && text[i+2] >= 0x8c && text[i+2] <= 0x8f {
				return true
			}
		}
	}
	return false
}

// toggles counts the quote characters q in s, not counting apostrophes
// (a single quote between two letters, as in "don't").
const quoteReach = 300

func toggles(s string, q byte) int {
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] != q {
			continue
		}
		if q == '\'' && i > 0 && i+1 < len(s) && isLetterByte(s[i-1]) && isLetterByte(s[i+1]) {
			continue
		}
		n++
	}
	return n
}

func isLetterByte(b byte) bool { return b >= 'a' && b <= 'z' || b >= 0x80 }
