package shootout;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.JsonNode;
import com.samskivert.mustache.Mustache;
import com.samskivert.mustache.Template;
import org.apache.commons.csv.CSVFormat;
import org.apache.commons.csv.CSVParser;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.RowMapper;
import org.springframework.security.crypto.bcrypt.BCryptPasswordEncoder;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * Every route of ../SPEC.md. JSON bodies are records serialised by Spring's
 * Jackson message converter (compact, keys in declaration order).
 *
 * <p>wait_time and timed sleep without holding a Tomcat thread: they return a
 * CompletableFuture that one scheduler thread completes after the delay, and
 * Spring MVC's async support answers it on a container thread then. bcrypt
 * hashes on the Tomcat worker thread that serves the request (a sync worker
 * model, 200 threads).
 */
@RestController
public class Routes implements DisposableBean {

    public record Message(String message) {}

    public record FileRead(String message, int rows) {}

    public record Reply(String payload) {}

    public record World(int id, int randomNumber) {}

    public record Fortune(int id, String message) {}

    static final String JSON = MediaType.APPLICATION_JSON_VALUE;
    static final String HTML_UTF8 = "text/html; charset=utf-8";
    static final int WORLD_ROWS = 10000;
    static final int MAX_QUERIES = 500;
    static final String SELECT_WORLD = "SELECT id, randomnumber FROM world WHERE id = ?";
    static final String SELECT_FORTUNES = "SELECT id, message FROM fortune";
    static final String UPDATE_WORLD = "UPDATE world SET randomnumber = ? WHERE id = ?";
    static final String ADDITIONAL_FORTUNE = "Additional fortune added at request time.";
    static final RowMapper<World> WORLD = (rs, n) -> new World(rs.getInt(1), rs.getInt(2));
    static final RowMapper<Fortune> FORTUNE = (rs, n) -> new Fortune(rs.getInt(1), rs.getString(2));
    static final CSVFormat CSV = CSVFormat.DEFAULT.builder().setHeader().setSkipHeaderRecord(true).get();

    private final BCryptPasswordEncoder bcrypt = new BCryptPasswordEncoder(10);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sleep-timer");
        t.setDaemon(true);
        return t;
    });
    private final Path csvPath;
    private final Database database;
    private final Template fortunesTemplate;

    /** @param mustache Boot's JMustache compiler, which escapes HTML and loads classpath:/templates/*.mustache */
    public Routes(Database database, Mustache.Compiler mustache) {
        this.database = database;
        this.fortunesTemplate = mustache.loadTemplate("fortunes");
        String dataDir = System.getenv("DATA_DIR");
        this.csvPath = Path.of(dataDir == null || dataDir.isEmpty() ? "../data" : dataDir, "titanic.csv");
    }

    @GetMapping(path = "/plaintext", produces = MediaType.TEXT_PLAIN_VALUE)
    public String plaintext() {
        return "Hello, World!";
    }

    @GetMapping(path = "/json", produces = JSON)
    public Message json() {
        return new Message("Hello, World!");
    }

    /** Opens and parses the CSV on every request (quotes honoured); counts the data rows. */
    @GetMapping(path = "/file_read", produces = JSON)
    public FileRead fileRead() throws IOException {
        int rows = 0;
        try (Reader reader = Files.newBufferedReader(csvPath, StandardCharsets.UTF_8);
             CSVParser parser = CSV.parse(reader)) {
            for (var ignored : parser) {
                rows++;
            }
        }
        return new FileRead("file_read", rows);
    }

    @GetMapping(path = "/wait_time", produces = JSON)
    public CompletableFuture<Message> waitTime() {
        return after(1000, () -> new Message("time_sleep"));
    }

    @PostMapping(path = "/test/simple", produces = JSON)
    public Reply simple(@RequestBody JsonNode body) {
        return new Reply("Hello, " + payload(body));
    }

    @PostMapping(path = "/test/timed", produces = JSON)
    public CompletableFuture<Reply> timed(@RequestBody JsonNode body) {
        String s = payload(body);
        return after(20, () -> new Reply("Hello, " + s));
    }

    @PostMapping(path = "/test/bcrypt", produces = JSON)
    public Reply bcrypt(@RequestBody JsonNode body) {
        String s = payload(body);
        try {
            return new Reply(bcrypt.encode(s));
        } catch (IllegalArgumentException e) {
            // BCrypt refuses passwords longer than 72 bytes.
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST, e.getMessage());
        }
    }

    @GetMapping(path = "/db", produces = JSON)
    public World db() {
        return database.jdbc().queryForObject(SELECT_WORLD, WORLD, randomId());
    }

    /** Q rows with independent random ids, one query per row. */
    @GetMapping(path = "/queries", produces = JSON)
    public List<World> queries(@RequestParam(name = "queries", required = false) String queries) {
        return readWorlds(queryCount(queries));
    }

    /** Every fortune with one query, plus one in memory, sorted by message, through Mustache. */
    @GetMapping(path = "/fortunes")
    public ResponseEntity<String> fortunes() {
        List<Fortune> fortunes = new ArrayList<>(database.jdbc().query(SELECT_FORTUNES, FORTUNE));
        fortunes.add(new Fortune(0, ADDITIONAL_FORTUNE));
        // String.compareTo compares UTF-16 code units, which is code point order
        // for text in the Basic Multilingual Plane, as every fortune is.
        fortunes.sort(Comparator.comparing(Fortune::message));
        String html = fortunesTemplate.execute(Map.of("fortunes", fortunes));
        return ResponseEntity.ok().header(HttpHeaders.CONTENT_TYPE, HTML_UTF8).body(html);
    }

    /**
     * Q rows read one query each, each given a new random number, written back
     * with one JDBC batch holding one UPDATE per drawn row, in id order (so
     * that concurrent requests lock rows in one order and cannot deadlock).
     * TechEmpower counts one updated row per drawn row, with no margin for a
     * batch of single-row UPDATEs: an id drawn twice is written twice, with
     * the same number both times, so every answered copy is what the table holds.
     */
    @GetMapping(path = "/updates", produces = JSON)
    public List<World> updates(@RequestParam(name = "queries", required = false) String queries) {
        List<World> read = readWorlds(queryCount(queries));
        Map<Integer, Integer> numbers = new HashMap<>();
        List<World> updated = new ArrayList<>(read.size());
        for (World w : read) {
            updated.add(new World(w.id(), numbers.computeIfAbsent(w.id(), id -> randomId())));
        }
        List<Object[]> batch = new ArrayList<>(updated.size());
        updated.stream()
                .sorted(Comparator.comparingInt(World::id))
                .forEach(w -> batch.add(new Object[] {w.randomNumber(), w.id()}));
        database.jdbc().batchUpdate(UPDATE_WORLD, batch);
        return updated;
    }

    private List<World> readWorlds(int n) {
        var jdbc = database.jdbc();
        List<World> worlds = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            worlds.add(jdbc.queryForObject(SELECT_WORLD, WORLD, randomId()));
        }
        return worlds;
    }

    /** The request's string payload; 400 when the body lacks one (a number is not a string). */
    static String payload(JsonNode body) {
        JsonNode payload = body == null ? null : body.get("payload");
        if (payload == null || !payload.isTextual()) {
            throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
                    "expected a JSON body {\"payload\": string}");
        }
        return payload.textValue();
    }

    /** ?queries=Q clamped to 1..500; missing, empty or not an integer is 1. */
    static int queryCount(String value) {
        if (value == null) {
            return 1;
        }
        int n;
        try {
            n = Integer.parseInt(value);
        } catch (NumberFormatException e) {
            if (!value.matches("[+-]?[0-9]+")) {
                return 1;
            }
            n = value.startsWith("-") ? 1 : MAX_QUERIES; // an integer beyond int's range
        }
        return Math.max(1, Math.min(n, MAX_QUERIES));
    }

    static int randomId() {
        return ThreadLocalRandom.current().nextInt(1, WORLD_ROWS + 1);
    }

    /** A future that the timer thread completes with supplier's value after ms milliseconds. */
    private <T> CompletableFuture<T> after(long ms, Supplier<T> supplier) {
        CompletableFuture<T> future = new CompletableFuture<>();
        timer.schedule(() -> future.complete(supplier.get()), ms, TimeUnit.MILLISECONDS);
        return future;
    }

    @Override
    public void destroy() {
        timer.shutdownNow();
    }
}
