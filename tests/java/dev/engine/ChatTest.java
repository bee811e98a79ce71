package dev.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/** The Java binding's Chat: turns that prefill only what is new, templates, streaming, abort. */
class ChatTest extends WithModel {
  static Chat chat(String template) {
    return new Chat(model, "You tell stories.", new ChatOptions().template(template), new Session.Params().nCtx(1024),
        Sampler.Params.greedy()).maxTokens(16);
  }

  static List<String> roles(Chat chat) {
    List<String> out = new ArrayList<String>();
    for (Message m : chat.messages()) out.add(m.role);
    return out;
  }

  @Test
  void aSecondTurnEvaluatesOnlyItsNewTokens() {
    try (Chat chat = chat(null)) {
      Session s = chat.session();
      Reply first = chat.say("A cat?");
      assertFalse(first.text.isEmpty());
      assertEquals(0, chat.lastPrompt().nReused);
      // The first turn: its prompt, then the reply's tokens.
      assertEquals(chat.lastPrompt().nPrompt + first.nTokens, s.nEvaluated());
      long firstPrompt = chat.lastPrompt().nPrompt;
      long before = s.nEvaluated();
      Reply second = chat.say("And a dog?");
      ChatPrompt p = chat.lastPrompt();
      assertTrue(p.nReused >= firstPrompt, "reused " + p.nReused + " of the first prompt's " + firstPrompt);
      // Only the second turn's new tokens were evaluated, then its reply.
      assertEquals(p.nPrompt - p.nReused + second.nTokens, s.nEvaluated() - before);
      assertTrue(p.nPrompt - p.nReused < p.nPrompt / 2, "evaluated " + (p.nPrompt - p.nReused) + " of " + p.nPrompt);
      assertEquals(Arrays.asList("system", "user", "assistant", "user", "assistant"), roles(chat));
      assertEquals(second.text, chat.messages().get(4).content);
    }
  }

  @Test
  void theTurnsPromptIsTheTemplatesRenderingOfTheConversation() {
    try (Chat chat = chat("llama3")) {
      chat.say("Tell one.");
      List<Message> asked = new ArrayList<Message>(chat.messages().subList(0, 2));
      String rendered = model.renderChat(asked, new ChatOptions().template("llama3"));
      assertTrue(rendered.contains("<|start_header_id|>user<|end_header_id|>\n\nTell one.<|eot_id|>"), rendered);
      // The session holds that prompt, then the reply.
      int[] prompt = Arrays.copyOf(chat.session().tokens(), (int) chat.lastPrompt().nPrompt);
      assertTrue(model.detokenize(prompt).endsWith(rendered.substring(rendered.indexOf("<|start_header_id|>user"))),
          model.detokenize(prompt));
    }
  }

  @Test
  void streamedPiecesMakeTheSameReply() {
    String whole;
    try (Chat chat = chat("chatml")) {
      whole = chat.say("Tell one.").text;
    }
    try (Chat chat = chat("chatml")) {
      StringBuilder pieces = new StringBuilder();
      Reply reply = chat.say("Tell one.", piece -> {
        pieces.append(piece);
        return true;
      });
      assertEquals(whole, pieces.toString());
      assertEquals(whole, reply.text);
    }
  }

  @Test
  void abortFromAnotherThreadStopsTheReplyAndTheNextTurnWorks() throws Exception {
    try (Chat chat = chat(null).maxTokens(200)) {
      CountDownLatch streaming = new CountDownLatch(1);
      CountDownLatch aborted = new CountDownLatch(1);
      StringBuilder pieces = new StringBuilder();
      AtomicReference<Throwable> thrown = new AtomicReference<Throwable>();
      Thread turn = new Thread(() -> {
        try {
          chat.say("A long story?", piece -> {
            pieces.append(piece);
            streaming.countDown();
            try {
              // The first piece waits for the abort: the next token's evaluation sees it.
              return aborted.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
              return false;
            }
          });
        } catch (Throwable t) {
          thrown.set(t);
        }
      });
      turn.start();
      assertTrue(streaming.await(30, TimeUnit.SECONDS));
      chat.abort();
      aborted.countDown();
      turn.join();
      assertTrue(thrown.get() instanceof EngineException, String.valueOf(thrown.get()));
      assertEquals(EngineException.Status.ABORTED, ((EngineException) thrown.get()).status());
      // The reply so far joined the conversation.
      assertEquals(Arrays.asList("system", "user", "assistant"), roles(chat));
      assertEquals(pieces.toString(), chat.messages().get(2).content);
      Reply next = chat.maxTokens(4).say("Short.");
      assertFalse(next.text.isEmpty());
      assertTrue(chat.lastPrompt().nReused > 0);
    }
  }

  @Test
  void aFailedPromptLeavesTheConversationAsItWas() {
    try (Chat chat = new Chat(model, null, new ChatOptions().template("no-such-template"), new Session.Params().nCtx(256),
        Sampler.Params.greedy())) {
      assertThrows(EngineException.class, () -> chat.say("Hi"));
      assertTrue(chat.messages().isEmpty());
    }
    Chat closed = chat(null);
    closed.close();
    assertThrows(IllegalStateException.class, () -> closed.say("Hi"));
  }

  @Test
  void aGrammarOrAJsonSchemaShapesTheReply() {
    try (Chat chat = new Chat(model, null, new ChatOptions(), new Session.Params().nCtx(1024),
        new Sampler.Params().seed(3)).maxTokens(120)) {
      chat.sampler().setJsonSchema(model,
          "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", \"maxLength\": 10}, "
              + "\"age\": {\"type\": \"integer\"}}, \"required\": [\"name\", \"age\"]}");
      Reply r = chat.say("Who is Lily?");
      assertTrue(r.text.matches("\\{\\s*\"name\"\\s*:\\s*\"[^\"]{0,10}\"\\s*,\\s*\"age\"\\s*:\\s*-?[0-9]+\\s*\\}\\s*"), r.text);
      chat.sampler().setGrammar(model, "root ::= \" \" (\"yes\" | \"no\") \".\"");
      Reply yesNo = chat.say("Is she happy?");
      assertTrue(yesNo.text.equals(" yes.") || yesNo.text.equals(" no."), yesNo.text);
      EngineException e = assertThrows(EngineException.class, () -> chat.sampler().setGrammar(model, "root ::= x"));
      assertTrue(e.getMessage().contains("line 1, column 10: rule 'x' is used but not defined"), e.getMessage());
      chat.sampler().clearGrammar();
    }
  }

  @Test
  void aRepliesToolCallsComeBack() {
    ParsedReply p = model.parseToolCalls(
        "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>");
    assertEquals("hermes", p.format);  // the built-in ChatML's: stories260K has no template
    assertEquals("Checking.", p.content);
    assertEquals(1, p.toolCalls.size());
    assertEquals("get_weather", p.toolCalls.get(0).name);
    assertEquals("{\"city\": \"Paris\"}", p.toolCalls.get(0).arguments);
    assertEquals("f", model.parseToolCalls("[TOOL_CALLS]f[ARGS]{}", "mistral").toolCalls.get(0).name);
    assertThrows(EngineException.class, () -> model.parseToolCalls("x", "xml"));
  }

  @Test
  void aToolGrammarGivesACallThatReadsBack() {
    try (Chat chat = new Chat(model, null, new ChatOptions(), new Session.Params().nCtx(1024),
        new Sampler.Params().seed(2)).maxTokens(600)) {
      chat.sampler().setToolGrammar(model, "[{\"type\": \"function\", \"function\": {\"name\": \"add\", "
          + "\"parameters\": {\"type\": \"object\", \"properties\": {\"a\": {\"type\": \"integer\"}, "
          + "\"b\": {\"type\": \"integer\"}}, \"required\": [\"a\", \"b\"]}}}]", null);
      Reply r = chat.say("Add 2 and 3.");
      ParsedReply p = model.parseToolCalls(r.text);
      assertEquals(1, p.toolCalls.size(), r.text);
      assertEquals("add", p.toolCalls.get(0).name);
      assertTrue(p.toolCalls.get(0).arguments.matches("\\{\\s*\"a\"\\s*:\\s*-?[0-9]+\\s*,\\s*\"b\"\\s*:\\s*-?[0-9]+\\s*\\}"),
          p.toolCalls.get(0).arguments);
    }
  }
}
