//! Whose words a recall query asks about.
//!
//! Most recall queries are about the user's own life ("how many fish are in my aquariums?"), and
//! the answer is in what the user said. Some ask what the agent itself said ("the restaurant you
//! recommended", "你上次推荐的那家餐厅"), and then the agent's replies hold the answer.
//! [`asks_about_agent_words`] tells the two apart from the query's wording alone: a "you" that
//! did something with words in the past, a "we" that talked, "our previous chat", "your
//! advice", and the Chinese equivalents. A request to the agent now ("can you recommend…",
//! "do you think…") is not about its past words.

/// Words that may stand between "you"/"we" and the verb: "you had mentioned", "you've told",
/// "we previously discussed" ("ve" and "d" are what is left of "you've" and "you'd").
const BETWEEN: &[&str] = &[
    "had",
    "have",
    "once",
    "previously",
    "already",
    "just",
    "first",
    "last",
    "ve",
    "d",
];

/// What "you" did with words or for the user. "recommend" and "came" are checked apart: they
/// only count as "did you recommend" and "came up".
const YOU_DID: &[&str] = &[
    "recommended",
    "told",
    "mentioned",
    "said",
    "suggested",
    "provided",
    "wrote",
    "created",
    "made",
    "gave",
    "listed",
    "shared",
    "described",
    "explained",
    "proposed",
    "showed",
    "helped",
    "picked",
    "decided",
    "named",
];

/// What "we" did together in a conversation ("went" only as "went over").
const WE_DID: &[&str] = &[
    "talked",
    "discussed",
    "decided",
    "chatted",
    "covered",
    "planned",
];

const OUR_EARLIER: &[&str] = &["previous", "last", "earlier", "past"];

const CONVERSATION: &[&str] = &[
    "chat",
    "chats",
    "conversation",
    "conversations",
    "discussion",
    "discussions",
    "talk",
    "talks",
    "game",
    "games",
    "session",
    "sessions",
];

const YOUR_WORDS: &[&str] = &[
    "recommendation",
    "recommendations",
    "suggestion",
    "suggestions",
    "list",
    "lists",
    "answer",
    "answers",
    "advice",
    "response",
    "responses",
    "reply",
    "replies",
];

/// Chinese phrasings that point at the agent's earlier words or at a past conversation. A verb
/// after 你 counts only with a mark of the past (的, 过): "你推荐几本书" and "你给我推荐" ask
/// for something now, "你推荐的那本书" asks about what was said.
const CHINESE_PHRASES: &[&str] = &[
    "你推荐的",
    "你推荐过",
    "你建议的",
    "你建议过",
    "你说过",
    "你说的",
    "你告诉过我",
    "你告诉我的",
    "你提到",
    "你提过",
    "你给我的",
    "你给过我",
    "你给的",
    "你写的",
    "你写过",
    "你列的",
    "你列出的",
    "你讲过",
    "你讲的",
    "你介绍的",
    "你介绍过",
    "我们聊过",
    "我们讨论",
    "我们谈过",
    "我们之前",
    "上次聊",
    "之前聊",
    "上次的对话",
    "之前的对话",
    "你的建议",
    "你的推荐",
    "你的回答",
];

/// "你" + one of these + a verb below: "你上次推荐的", "你之前说".
const CHINESE_WHEN: &[&str] = &["上次", "之前", "刚才"];

const CHINESE_VERBS: &[&str] = &[
    "推荐", "建议", "说", "告诉", "提到", "提过", "给", "写", "列", "讲", "介绍",
];

/// Whether `query` asks about what the agent itself said (its recommendation, its answer, "what
/// did you tell me") rather than about the user's own life.
pub(crate) fn asks_about_agent_words(query: &str) -> bool {
    english_asks(query) || chinese_asks(query)
}

fn english_asks(query: &str) -> bool {
    let words: Vec<String> = query
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_ascii_lowercase)
        .collect();
    let at = |k: usize| words.get(k).map_or("", String::as_str);
    // The verb right after `k`, or after one word from BETWEEN.
    let verb_after = |k: usize| {
        let next = k + 1;
        if BETWEEN.contains(&at(next)) {
            [next, next + 1]
        } else {
            [next, next]
        }
    };
    (0..words.len()).any(|i| match at(i) {
        "you" => verb_after(i).iter().any(|&v| match at(v) {
            "recommend" => v == i + 1 && i > 0 && at(i - 1) == "did",
            "came" => at(v + 1) == "up",
            verb => YOU_DID.contains(&verb),
        }),
        "we" => verb_after(i).iter().any(|&v| match at(v) {
            "went" => at(v + 1) == "over",
            verb => WE_DID.contains(&verb),
        }),
        "our" => OUR_EARLIER.contains(&at(i + 1)) && CONVERSATION.contains(&at(i + 2)),
        "your" => YOUR_WORDS.contains(&at(i + 1)),
        _ => false,
    })
}

fn chinese_asks(query: &str) -> bool {
    if CHINESE_PHRASES.iter().any(|p| query.contains(p)) {
        return true;
    }
    query.match_indices('你').any(|(at, you)| {
        let rest = &query[at + you.len()..];
        CHINESE_WHEN.iter().any(|when| {
            rest.strip_prefix(when)
                .is_some_and(|verb| CHINESE_VERBS.iter().any(|v| verb.starts_with(v)))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_questions_about_the_agents_words() {
        for q in [
            "Can you remind me of the name of the romantic Italian restaurant in Rome you recommended for dinner?",
            "I remember you told me to dilute tea tree oil",
            "I'm looking back at our previous chat about the DHL campaign",
            "What was the second book you've mentioned?",
            "Which hotel did you recommend in Paris?",
            "What was the name you came up with for my band?",
            "We discussed a workout plan, what was the third exercise?",
            "Remind me of what we went over last time",
            "What was your recommendation for the laptop?",
            "In our last session, which stretch did I ask about?",
        ] {
            assert!(asks_about_agent_words(q), "{q}");
        }
    }

    #[test]
    fn english_questions_about_the_users_life_or_requests_now() {
        for q in [
            "What degree did I graduate with?",
            "How many fish are in my aquariums?",
            "Do you think I should attend my reunion?",
            "Can you recommend some books?",
            "You came to the party",
            "We went to the beach",
            "Our past neighbours moved away",
            "",
        ] {
            assert!(!asks_about_agent_words(q), "{q}");
        }
    }

    #[test]
    fn chinese_questions_about_the_agents_words() {
        for q in [
            "你上次推荐的那家餐厅叫什么？",
            "你之前说的那本书是什么",
            "你刚才提到的方法再说一遍",
            "我们聊过的那个电影",
            "你的建议是什么来着",
            "你告诉我的密码提示",
            "你推荐的那家 pizza 叫什么",
            "你给过我一个链接",
        ] {
            assert!(asks_about_agent_words(q), "{q}");
        }
    }

    #[test]
    fn chinese_questions_about_the_users_life_or_opinions() {
        for q in [
            "我上个月去了哪里？",
            "你觉得我应该去吗？",
            "你上次去了哪里",
            "我之前养了几条鱼",
            "你给我推荐几本书吧",
            "你推荐几本书给我",
            "你帮我看看这个",
            "你告诉我怎么做",
        ] {
            assert!(!asks_about_agent_words(q), "{q}");
        }
    }
}
