package shootout;

import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.http.HttpStatus;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ResponseStatusException;

/**
 * The database of SPEC.md "Database routes": one HikariCP pool of at most
 * DB_POOL_SIZE connections (default 4; one process, so the whole budget) and a
 * JdbcTemplate on it. Built only when DATABASE_URL is set; without it
 * {@link #jdbc()} answers 503.
 *
 * <p>DATABASE_URL ({@code postgres://user:pass@host:port/db}) is turned into a
 * JDBC URL here. The PostgreSQL JDBC driver prepares a statement on the server
 * once it has run the same SQL five times on a connection (its default
 * prepareThreshold), and caches it per connection.
 */
@Component
public class Database implements DisposableBean {

    static final int DEFAULT_POOL_SIZE = 4;

    private final HikariDataSource dataSource;
    private final JdbcTemplate jdbc;

    public Database() {
        String url = System.getenv("DATABASE_URL");
        if (url == null || url.isBlank()) {
            System.err.println("java-spring: DATABASE_URL is not set: the database routes answer 503");
            this.dataSource = null;
            this.jdbc = null;
            return;
        }
        int size = poolSize(System.getenv("DB_POOL_SIZE"));
        HikariConfig config = config(url.trim());
        config.setPoolName("java-spring");
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(size);
        // Start even when the database is not reachable yet; requests fail until it is.
        config.setInitializationFailTimeout(-1);
        this.dataSource = new HikariDataSource(config);
        this.jdbc = new JdbcTemplate(dataSource);
        System.err.println("java-spring: database pool: at most " + size + " connections");
    }

    /** The JdbcTemplate, or a 503 when the server runs without a database. */
    public JdbcTemplate jdbc() {
        if (jdbc == null) {
            throw new ResponseStatusException(HttpStatus.SERVICE_UNAVAILABLE,
                    "no database configured (DATABASE_URL is not set)");
        }
        return jdbc;
    }

    static int poolSize(String value) {
        if (value == null || value.isBlank()) {
            return DEFAULT_POOL_SIZE;
        }
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("DB_POOL_SIZE must be a positive integer, not " + value);
        }
        if (n < 1) {
            throw new IllegalArgumentException("DB_POOL_SIZE must be a positive integer, not " + value);
        }
        return n;
    }

    /** postgres[ql]://user:pass@host[:port]/db[?params] as a HikariConfig. */
    static HikariConfig config(String url) {
        URI uri = URI.create(url);
        String scheme = uri.getScheme();
        if (!"postgres".equals(scheme) && !"postgresql".equals(scheme)) {
            throw new IllegalArgumentException("DATABASE_URL must be postgres://user:pass@host:port/db");
        }
        StringBuilder jdbcUrl = new StringBuilder("jdbc:postgresql://").append(uri.getRawAuthority().replaceFirst("^.*@", ""));
        jdbcUrl.append(uri.getRawPath() == null ? "/" : uri.getRawPath());
        if (uri.getRawQuery() != null) {
            jdbcUrl.append('?').append(uri.getRawQuery());
        }
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl.toString());
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            config.setUsername(decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                config.setPassword(decode(userInfo.substring(colon + 1)));
            }
        }
        return config;
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }

    @Override
    public void destroy() {
        if (dataSource != null) {
            dataSource.close();
        }
    }
}
