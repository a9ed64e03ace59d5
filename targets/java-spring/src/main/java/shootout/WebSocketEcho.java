package shootout;

import java.io.IOException;

import org.springframework.context.annotation.Configuration;
import org.springframework.web.socket.BinaryMessage;
import org.springframework.web.socket.TextMessage;
import org.springframework.web.socket.WebSocketSession;
import org.springframework.web.socket.config.annotation.EnableWebSocket;
import org.springframework.web.socket.config.annotation.WebSocketConfigurer;
import org.springframework.web.socket.config.annotation.WebSocketHandlerRegistry;
import org.springframework.web.socket.handler.AbstractWebSocketHandler;

/**
 * The WebSocket echo of ../SPEC.md "WebSocket": {@code GET /ws} upgrades, and
 * every text or binary message comes back unchanged as one message of the
 * same type, in order.
 *
 * <p>Spring's WebSocket API (Spring Framework reference, "WebSocket API",
 * https://docs.spring.io/spring-framework/reference/6.2/web/websocket/server.html):
 * a {@link WebSocketConfigurer} maps a handler to {@code /ws}, and Tomcat's
 * JSR-356 container (tomcat-embed-websocket) runs the protocol: ping is
 * answered with pong, close with close, and a protocol error (an unmasked
 * client frame, say) with close 1002, all by Tomcat's defaults.
 *
 * <p>Message size: Tomcat assembles a whole message in a buffer of 8 KiB by
 * default and closes the session with 1009 for a larger one. That page's
 * "Configuring the Server" section raises the buffers with a
 * ServletServerContainerFactoryBean, but Tomcat allocates both buffers for
 * every session when it opens (WsFrameBase: a ByteBuffer of the binary size
 * and a CharBuffer, two bytes a character, of the text size), so 1 MiB buffers
 * cost 3 MiB of heap per connection: measured here, 120 connections ran the
 * 256 MiB heap out of memory. Instead the handler takes partial messages
 * ({@link #supportsPartialMessages}, WebSocketHandler's javadoc): Tomcat hands
 * over each frame, or each 8 KiB of a longer one, and the handler sends it
 * straight back as the next fragment of the same message, so a message of any
 * size is echoed (1 MiB included) with the 8 KiB default buffers, and a
 * message that arrives whole in one small frame goes back whole in one frame.
 *
 * <p>No allowed origins are set: Spring then accepts same-origin handshakes
 * only, and a handshake without an {@code Origin} header (the load's, a
 * non-browser client's) counts as same-origin and is accepted.
 *
 * <p>The handler runs on the Tomcat thread that read the frame and sends with
 * a blocking write, so one session never sends two frames at once.
 */
@Configuration
@EnableWebSocket
public class WebSocketEcho implements WebSocketConfigurer {

    @Override
    public void registerWebSocketHandlers(WebSocketHandlerRegistry registry) {
        registry.addHandler(new Echo(), "/ws");
    }

    /** Sends every message, or part of one, back as it came ({@code isLast} kept). */
    static final class Echo extends AbstractWebSocketHandler {

        @Override
        protected void handleTextMessage(WebSocketSession session, TextMessage message) throws IOException {
            session.sendMessage(message);
        }

        @Override
        protected void handleBinaryMessage(WebSocketSession session, BinaryMessage message) throws IOException {
            session.sendMessage(message);
        }

        @Override
        public boolean supportsPartialMessages() {
            return true;
        }
    }
}
