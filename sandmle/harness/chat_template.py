"""Chat templates sandmle ships with its checkpoints, and the prelude that lets one template
render Inspect's message objects exactly as it renders training's chat dicts.

Training renders a conversation as Hugging Face chat dicts (``env.chat.chat_dicts``):
a tool call is ``{"type": "function", "function": {"name", "arguments"}}`` and a tool is
``{"type": "function", "function": {...}}``. Inspect's ``hf/`` provider hands the template its
own objects dumped to dicts instead: a call's ``function`` is the name (a string), a tool is the
bare ``{"name", "description", "parameters"}``, a failed tool result carries ``error``; for a
model whose name contains "qwen" it even moves past calls into the text, as
``\n```json\n{"name": ..., "arguments": ...}\n```` blocks (``inspect_tools_to_string``). The
prelude rewrites either shape into the first one before the template body runs, so the one
template file saved beside the weights gives training, ``hf/<ckpt>`` and a vLLM server
(``--chat-template <ckpt>/chat_template.jinja``) the same text.
"""

from __future__ import annotations

PRELUDE_MARK = "{#- sandmle: inspect-objects prelude #}"
INSPECT_PRELUDE = (
    PRELUDE_MARK + "{%- set JSON_CALL = '\\n```json\\n{\"name\": \"' %}{%- set FENCE = '\\n```' %}"
    "{%- set sandmle = namespace(messages=[], tools=[]) %}"
    "{%- for m in messages %}"
    "{%- set content = m.content if m.content is string else (m.content or '') %}"
    "{%- if m.error is defined and m.error %}{%- set content = 'Error: ' + m.error.message %}{%- endif %}"
    "{%- if m.role == 'tool' %}"
    "{%- set name = m.name if m.name is defined else (m.function or '') %}"
    "{%- set d = {'role': 'tool', 'name': name, 'content': content} %}"
    "{%- elif m.role == 'assistant' and not m.tool_calls and tools and JSON_CALL in content %}"
    "{%- set parts = content.split(JSON_CALL) %}"
    "{%- set calls = namespace(list=[]) %}"
    "{%- for p in parts[1:] %}"
    "{%- set body = p[:-4] if p.endswith(FENCE) else p %}"
    "{%- set f = {'name': body.split('\"')[0], 'arguments': body.split('\"arguments\": ', 1)[1][:-1]} %}"
    "{%- set calls.list = calls.list + [{'type': 'function', 'function': f}] %}"
    "{%- endfor %}"
    "{%- set d = {'role': 'assistant', 'content': parts[0], 'tool_calls': calls.list} %}"
    "{%- elif m.role == 'assistant' and m.tool_calls %}"
    "{%- set calls = namespace(list=[]) %}"
    "{%- for c in m.tool_calls %}"
    "{%- if c.function is string %}"
    "{%- set f = {'name': c.function, 'arguments': c.arguments} %}"
    "{%- else %}{%- set f = {'name': c.function.name, 'arguments': c.function.arguments} %}"
    "{%- endif %}"
    "{%- set calls.list = calls.list + [{'type': 'function', 'function': f}] %}"
    "{%- endfor %}"
    "{%- set d = {'role': 'assistant', 'content': content, 'tool_calls': calls.list} %}"
    "{%- else %}"
    "{%- set d = {'role': m.role, 'content': content} %}"
    "{%- endif %}"
    "{%- if m.reasoning_content is defined %}"
    "{%- set d = dict(d, reasoning_content=m.reasoning_content) %}{%- endif %}"
    "{%- set sandmle.messages = sandmle.messages + [d] %}"
    "{%- endfor %}"
    "{%- for t in tools or [] %}"
    "{%- if t.function is defined %}{%- set sandmle.tools = sandmle.tools + [t] %}"
    "{%- else %}{%- set sandmle.tools = sandmle.tools + [{'type': 'function', 'function': t}] %}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- set messages = sandmle.messages %}"
    "{%- set tools = sandmle.tools if tools else tools %}"
)
"""Jinja that normalises ``messages`` and ``tools`` (Inspect's dumps or training's dicts)."""


def with_prelude(template: str) -> str:
    """``template`` with the prelude in front (once)."""
    if template.startswith(PRELUDE_MARK):
        return template
    return INSPECT_PRELUDE + template


HERMES_TEMPLATE = with_prelude(
    "{%- set nl = '\\n' %}"
    "{%- if tools %}{{ '<|im_start|>system' + nl }}"
    "{%- if messages[0].role == 'system' %}{{ messages[0].content + nl + nl }}{% endif %}"
    "{{ '# Tools' + nl + nl + 'You may call one or more functions. Their signatures are within '"
    " + '<tools></tools>:' + nl + '<tools>' + nl }}"
    "{%- for tool in tools %}{{ tool | tojson }}{{ nl }}{% endfor %}"
    "{{ '</tools>' + nl + nl + 'To call a function, reply with a JSON object of its name and '"
    " + 'arguments within <tool_call></tool_call> tags:' + nl"
    ' + \'<tool_call>{"name": <function-name>, "arguments": <args-json-object>}</tool_call>\''
    " + '<|im_end|>' + nl }}"
    "{%- elif messages[0].role == 'system' %}"
    "{{ '<|im_start|>system' + nl + messages[0].content + '<|im_end|>' + nl }}"
    "{%- endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'user' or (m.role == 'system' and not loop.first) %}"
    "{{ '<|im_start|>' + m.role + nl + m.content + '<|im_end|>' + nl }}"
    "{%- elif m.role == 'assistant' %}{{ '<|im_start|>assistant' + nl }}{% generation %}"
    "{{ m.content or '' }}"
    "{%- for c in m.tool_calls or [] %}"
    '{{ \'<tool_call>{"name": "\' + c.function.name + \'", "arguments": \' }}'
    "{%- if c.function.arguments is string %}{{ c.function.arguments }}"
    "{%- else %}{{ c.function.arguments | tojson }}{% endif %}{{ '}</tool_call>' }}"
    "{%- endfor %}{{ '<|im_end|>' }}{% endgeneration %}{{ nl }}"
    "{%- elif m.role == 'tool' %}"
    "{{ '<|im_start|>user' + nl + '<tool_response>' + nl + m.content + nl"
    " + '</tool_response><|im_end|>' + nl }}"
    "{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}{{ '<|im_start|>assistant' + nl }}{% endif %}"
)
"""ChatML with Hermes-style tools (listed in the system turn, calls as ``<tool_call>`` JSON,
results as ``<tool_response>`` user turns), prefix-preserving, with ``{% generation %}``
markers for assistant-only SFT. The tiny model and SmolLM2 (ChatML tokens) use it."""
