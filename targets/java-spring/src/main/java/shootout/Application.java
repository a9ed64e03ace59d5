package shootout;

import java.util.Map;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.error.ErrorMvcAutoConfiguration;

/**
 * java-spring: the shootout API contract (../SPEC.md) on Spring Boot 3.5 with
 * Spring Web MVC on embedded Tomcat (its default pool of 200 worker threads).
 *
 * <ul>
 *   <li>{@link Routes}: the routes, JSON through Spring's Jackson message converter.
 *   <li>{@link Database}: HikariCP and JdbcTemplate, built only when DATABASE_URL is set.
 * </ul>
 *
 * <p>DataSourceAutoConfiguration is excluded: without DATABASE_URL there is no
 * DataSource at all and the application still starts (the database routes
 * answer 503). ErrorMvcAutoConfiguration is excluded too: errors are answered
 * as problem details by Spring MVC's exception handler
 * ({@code spring.mvc.problemdetails.enabled}), and no {@code /error} route exists.
 */
@SpringBootApplication(exclude = {DataSourceAutoConfiguration.class, ErrorMvcAutoConfiguration.class})
public class Application {

    public static void main(String[] args) {
        String port = System.getenv("PORT");
        if (port == null || port.isBlank()) {
            System.err.println("java-spring: the PORT environment variable is required");
            System.exit(2);
        }
        String host = System.getenv("HOST");
        if (host == null || host.isBlank()) {
            host = "127.0.0.1";
        }
        SpringApplication app = new SpringApplication(Application.class);
        app.setDefaultProperties(Map.of("server.port", port.trim(), "server.address", host.trim()));
        app.run(args);
        System.err.println("java-spring: listening on " + host + ":" + port);
    }
}
