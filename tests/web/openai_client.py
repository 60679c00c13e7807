"""The official openai package against Hearth's /v1 API: a whole answer, a streamed one, the
model list, and a wrong key refused with OpenAI's error. Prints one JSON line with what it saw.

usage: openai_client.py BASE_URL API_KEY
"""

import json
import sys

import openai


def main() -> None:
    base, key = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(base_url=base, api_key=key, max_retries=0, timeout=60)
    seen = {}
    whole = client.chat.completions.create(
        model="hearth", messages=[{"role": "user", "content": "say it whole"}]
    )
    seen["whole"] = whole.choices[0].message.content
    seen["finish"] = whole.choices[0].finish_reason
    chunks = client.chat.completions.create(
        model="hearth",
        messages=[{"role": "user", "content": "say it streamed"}],
        stream=True,
    )
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    seen["streamed"] = "".join(pieces)
    seen["pieces"] = len([p for p in pieces if p])
    seen["models"] = [m.id for m in client.models.list()]
    try:
        openai.OpenAI(base_url=base, api_key="wrong", max_retries=0).models.list()
        seen["wrong_key"] = "accepted"
    except openai.AuthenticationError as e:
        seen["wrong_key"] = e.status_code
        seen["wrong_key_code"] = e.code
    print(json.dumps(seen))


if __name__ == "__main__":
    main()
