package dev.engine;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The Java binding's Model: loading, errors, tokens, chat rendering, closing. ENGINE_DEFAULT_MODEL is stories260K. */
class ModelTest extends WithModel {
  @Test
  void loadsTheModel() {
    assertEquals(512, model.nVocab());
    assertTrue(model.bos() >= 0);
    assertTrue(model.isEndOfGeneration(model.eos()));
    assertFalse(Model.version().isEmpty());
  }

  @Test
  void aBadPathIsAnEngineExceptionNamingTheFile() {
    EngineException e = assertThrows(EngineException.class, () -> new Model("/nonexistent/dir/model.gguf"));
    assertEquals(EngineException.Status.MODEL, e.status());
    assertTrue(e.getMessage().contains("/nonexistent/dir/model.gguf"), e.getMessage());
  }

  @Test
  void tokensRoundTrip() {
    int[] ids = model.tokenize("Once upon a time");
    assertEquals(model.bos(), ids[0]);
    int[] noBos = model.tokenize("Once upon a time", false, false);
    assertArrayEquals(Arrays.copyOfRange(ids, 1, ids.length), noBos);
    assertEquals("Once upon a time", model.detokenize(noBos));
    assertEquals("Once upon a time", model.detokenize(ids));  // BOS gives nothing
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int t : noBos) bytes.write(model.tokenBytes(t), 0, model.tokenBytes(t).length);
    assertEquals("Once upon a time", new String(bytes.toByteArray(), StandardCharsets.UTF_8).trim());
  }

  @Test
  void textOutsideTheBasicPlaneCrossesWhole() {
    // JNI's own strings would turn the emoji into two 3-byte surrogates; the
    // binding passes UTF-8 bytes, which the byte-fallback tokens spell exactly.
    String text = "Lily saw a cat \uD83D\uDE00 caf\u00e9";
    assertEquals(text, model.detokenize(model.tokenize(text, false, false)));
  }

  @Test
  void badTokensAreEngineExceptions() {
    EngineException e = assertThrows(EngineException.class, () -> model.tokenBytes(model.nVocab()));
    assertEquals(EngineException.Status.INVALID_ARGUMENT, e.status());
  }

  @Test
  void rendersAChatWithABuiltinTemplate() {
    assertTrue(Model.builtinChatTemplates().contains("chatml"));
    String prompt = model.renderChat(Collections.singletonList(Message.user("Hi")), new ChatOptions().template("chatml"));
    assertEquals("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n", prompt);
    EngineException e = assertThrows(EngineException.class,
        () -> model.renderChat(Collections.singletonList(Message.user("Hi")), new ChatOptions().template("no-such-template")));
    assertTrue(e.getMessage().contains("no-such-template"), e.getMessage());
    e = assertThrows(EngineException.class, () -> model.renderChat(Collections.singletonList(Message.user("Hi")),
        new ChatOptions().templateText("{{ raise_exception('roles must alternate') }}")));
    assertEquals(EngineException.Status.TEMPLATE, e.status());
    assertTrue(e.getMessage().contains("roles must alternate"), e.getMessage());
  }

  @Test
  void toolCallsAndResultsReachTheTemplate() {
    java.util.List<Message> messages = Arrays.asList(Message.user("Weather in Paris?"),
        new Message("assistant", "", Collections.singletonList(new Message.ToolCall("call_1", "get_weather",
            "{\"city\": \"Paris\"}")), null, null),
        new Message("tool", "{\"temp\": 21}", null, "call_1", "get_weather"));
    assertEquals("<|im_start|>user\nWeather in Paris?<|im_end|>\n<|im_start|>assistant\n<tool_call>\n"
            + "{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call><|im_end|>\n"
            + "<|im_start|>user\n<tool_response>\n{\"temp\": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n",
        model.renderChat(messages, new ChatOptions().template("chatml")));
    String tools = "[{\"type\": \"function\", \"function\": {\"name\": \"get_weather\", \"parameters\": {}}}]";
    assertTrue(model.renderChat(messages.subList(0, 1), new ChatOptions().template("chatml").tools(tools))
        .contains("get_weather"));
    java.util.List<Message> bad = Collections.singletonList(new Message("assistant", "",
        Collections.singletonList(new Message.ToolCall(null, "f", "not json")), null, null));
    EngineException e = assertThrows(EngineException.class, () -> model.renderChat(bad, new ChatOptions().template("chatml")));
    assertEquals(EngineException.Status.INVALID_ARGUMENT, e.status());
    assertTrue(e.getMessage().contains("tool call 0"), e.getMessage());
  }

  @Test
  void aModelWithOpenSessionsRefusesToCloseAndClosesAfterThem() {
    Model m = new Model(MODEL);
    Session s = new Session(m, new Session.Params().nCtx(64));
    EngineException e = assertThrows(EngineException.class, m::close);
    assertEquals(EngineException.Status.IN_USE, e.status());
    assertTrue(m.tokenize("Once").length > 1);  // still open and usable
    s.close();
    m.close();
    m.close();  // twice: nothing
    IllegalStateException closed = assertThrows(IllegalStateException.class, () -> m.tokenize("Once"));
    assertEquals("Model is closed", closed.getMessage());
    assertThrows(IllegalStateException.class, () -> new Session(m));
  }

  @Test
  void loadProgressEndsAtOneAndCancels() {
    List<Float> seen = new ArrayList<>();
    List<String> phases = new ArrayList<>();
    try (Model m = new Model(MODEL, null, (fraction, phase) -> seen.add(fraction) && phases.add(phase))) {
      assertEquals(model.nVocab(), m.nVocab());
    }
    assertEquals(1.0f, seen.get(seen.size() - 1));
    assertEquals("done", phases.get(phases.size() - 1));
    for (int i = 1; i < seen.size(); i++) assertTrue(seen.get(i - 1) <= seen.get(i));
    EngineException cancelled = assertThrows(EngineException.class, () -> new Model(MODEL, null, (f, p) -> false));
    assertEquals(EngineException.Status.CANCELLED, cancelled.status());
    // An exception in the callback cancels the load and comes out of the constructor.
    assertThrows(ArithmeticException.class, () -> new Model(MODEL, null, (f, p) -> 1 / (int) f > 0));
  }
}
