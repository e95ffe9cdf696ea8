"""One episode in a process of its own: ``inspect eval`` of one sample, the policy outside.

The environment's host starts ``python -m sandmle.env.worker`` per episode. The worker runs the
episode's task exactly as ``inspect eval sandmle/synthetic --solver sandmle/<scaffold>`` does
(same prompt, tools, sandbox, limits, scorer, log); only the model differs: ``sandmle-env``
hands each turn's conversation to the host and waits for the policy's action. Inspect allows
one eval per process, and a process per episode lets the host end an episode (deadline, lost
client) by killing it, sandboxes with it (bwrap dies with its parent).

stdin carries the host's lines; the protocol's output goes to the process's original stdout,
and anything else the episode prints goes to stderr, so a stray ``print`` cannot break it.
"""

from __future__ import annotations

import ctypes
import math
import os
import re
import signal
import sys
import time
from typing import IO, Any

import anyio
from inspect_ai import eval as inspect_eval
from inspect_ai.event import ModelEvent
from inspect_ai.log import EvalSample, resolve_sample_attachments
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    GenerateConfig,
    Logprob,
    Model,
    ModelAPI,
    ModelOutput,
    StopReason,
    get_model,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import LimitExceededError
from pydantic import BaseModel, ValidationError

from sandmle.env.chat import assistant_message, chat_dicts, parse_tool_calls, tool_schema
from sandmle.env.protocol import (
    ActionLine,
    DoneLine,
    EndpointModel,
    EpisodeRequest,
    FailedLine,
    ModelCall,
    ObservationLine,
)
from sandmle.env.task import SCORER, episode_task
from sandmle.errors import SandmleError

PR_SET_PDEATHSIG = 1
TOKEN_ID = re.compile(r"token_id:(\d+)")
CHARS_PER_TOKEN = 4
"""Token estimate for react's context trimming: the policy's tokenizer lives with the client."""


class Channel:
    """The worker's side of the protocol: lines in on stdin, lines out on the original stdout."""

    def __init__(self, reader: IO[str], writer: IO[str]) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    def from_stdio(cls) -> Channel:
        writer = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8", buffering=1)
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # prints go to stderr from here on
        return cls(sys.stdin, writer)

    def send(self, line: BaseModel) -> None:
        self.writer.write(line.model_dump_json() + "\n")
        self.writer.flush()

    def receive(self) -> str:
        line = self.reader.readline()
        if not line:
            raise ConnectionError("the environment host closed the episode")
        return line


@modelapi(name="sandmle-env")
class BridgeAPI(ModelAPI):
    """``sandmle-env/<name>``: a policy that lives outside the process, one turn per line."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        channel: Channel | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if channel is None:
            raise ValueError("sandmle-env runs inside an environment worker")
        self.channel = channel
        self.cut_waiting = False

    async def count_text_tokens(self, text: str) -> int:  # offline: no tiktoken download
        return len(text) // CHARS_PER_TOKEN + 1

    def collapse_user_messages(self) -> bool:
        return True  # as the training policy's API: the same messages reach the template

    def max_connections(self) -> int:
        return 1

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        self.channel.send(
            ObservationLine(messages=chat_dicts(input), tools=[tool_schema(t) for t in tools])
        )
        try:
            line = await anyio.to_thread.run_sync(self.channel.receive, abandon_on_cancel=True)
        except anyio.get_cancelled_exc_class():  # a sample limit fell while the policy worked
            self.cut_waiting = True
            raise
        action = ActionLine.model_validate_json(line)
        if action.limit is not None:  # the policy's context is spent, as in-process
            raise LimitExceededError(
                "token",
                value=action.limit.value,
                limit=action.limit.limit,
                message=action.limit.message,
            )
        reply = _reply(action, self.model_name)
        stop: StopReason = "tool_calls" if reply.tool_calls else "stop"
        choice = ChatCompletionChoice(message=reply, stop_reason=stop)
        return ModelOutput(model=self.model_name, choices=[choice])


def _reply(action: ActionLine, model: str) -> ChatMessageAssistant:
    """The policy's turn as Inspect's message: raw text is parsed as training parses it."""
    if action.text is not None:
        text, calls = parse_tool_calls(action.text)
        return ChatMessageAssistant(content=text, tool_calls=calls or None, model=model)
    return assistant_message(action.message or {}, model)


def run(request: EpisodeRequest, channel: Channel) -> DoneLine:
    """The episode's eval; its one sample's grade, error and conversation (and, for a whole
    episode, its model calls)."""
    whole = request.model is not None
    task = episode_task(
        request.episode, request.pack, [request.task], name="synthetic-env", whole=whole
    )
    bridge = BridgeAPI("policy", channel=channel)
    config = GenerateConfig(**request.episode.generate_args())
    model = endpoint_model(request.model, config) if request.model else Model(bridge, config)
    start = time.monotonic()
    (log,) = inspect_eval(
        task,
        model=model,
        log_dir=request.log_dir,
        display="none",
        fail_on_error=False,
        score_display=False,
        seed=request.seed,
        metadata={"episode_id": request.episode_id},
    )
    if not log.samples:
        error = log.error.message if log.error else f"the eval ended {log.status}"
        return DoneLine(error=error, log=log.location, seconds=time.monotonic() - start)
    sample = log.samples[0]
    score = (sample.scores or {}).get(SCORER)
    grade = dict(score.value) if score and isinstance(score.value, dict) else {}
    return DoneLine(
        grade={k: None if math.isnan(float(v)) else float(v) for k, v in grade.items()},
        error=sample.error.message if sample.error else None,
        messages=chat_dicts(sample.messages),
        log=log.location,
        seconds=time.monotonic() - start,
        tool_calls=sum(1 for e in sample.events if e.event == "tool"),
        cut_waiting=bridge.cut_waiting,
        calls=model_calls(sample) if whole else [],
    )


def endpoint_model(endpoint: EndpointModel, config: GenerateConfig) -> Model:
    """The caller's OpenAI-compatible endpoint as Inspect's model (chat completions, no
    streaming), asking for logprobs and, from vLLM, token ids."""
    extra = {"return_tokens_as_token_ids": True} if endpoint.token_ids else None
    asked = GenerateConfig(logprobs=endpoint.logprobs or None, extra_body=extra)
    return get_model(
        f"openai-api/endpoint/{endpoint.name}",
        base_url=endpoint.base_url,
        api_key=endpoint.api_key or "EMPTY",  # vLLM's convention for "no key"
        config=config.merge(asked),
        memoize=False,
        responses_api=False,
        stream=False,
    )


def model_calls(sample: EvalSample) -> list[ModelCall]:
    """Every model call of the sample, in order: input, reply, and the sampled tokens."""
    sample = resolve_sample_attachments(sample)
    calls = []
    for event in sample.events:
        if not isinstance(event, ModelEvent) or not event.output.choices:
            continue
        choice = event.output.choices[0]
        tokens, ids, logprobs = _sampled(choice.logprobs.content if choice.logprobs else None)
        calls.append(
            ModelCall(
                messages=chat_dicts(event.input),
                reply=chat_dicts([choice.message])[0],
                tokens=tokens,
                token_ids=ids,
                logprobs=logprobs,
            )
        )
    return calls


def _sampled(content: list[Logprob] | None) -> tuple[Any, Any, Any]:
    """Tokens, ids (vLLM spells a token ``token_id:<n>`` when asked) and logprobs, or Nones."""
    if not content:
        return None, None, None
    tokens = [c.token for c in content]
    ids = [TOKEN_ID.fullmatch(t) for t in tokens]
    token_ids = [int(m.group(1)) for m in ids if m] if all(ids) else None
    return tokens, token_ids, [c.logprob for c in content]


def _die_with_host() -> None:
    """Be killed when the host dies (Linux), so no episode outlives a crashed server."""
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass
    if os.getppid() == 1:  # the host died before the call above
        os._exit(1)


def main() -> None:
    _die_with_host()
    channel = Channel.from_stdio()
    try:
        request = EpisodeRequest.model_validate_json(channel.receive())
        channel.send(run(request, channel))
    except (SandmleError, ValidationError, ConnectionError) as exc:
        channel.send(FailedLine(error=str(exc).splitlines()[0] if str(exc) else repr(exc)))


if __name__ == "__main__":
    main()
