package shootout;

import org.apache.catalina.connector.Connector;
import org.apache.coyote.http11.Http11NioProtocol;
import org.apache.coyote.http2.Http2Protocol;
import org.apache.tomcat.util.net.SSLHostConfig;
import org.apache.tomcat.util.net.SSLHostConfigCertificate;
import org.springframework.boot.ssl.pem.PemSslStoreBundle;
import org.springframework.boot.ssl.pem.PemSslStoreDetails;
import org.springframework.boot.web.embedded.tomcat.TomcatServletWebServerFactory;
import org.springframework.boot.web.server.WebServerFactoryCustomizer;
import org.springframework.stereotype.Component;

/**
 * The TLS port of ../SPEC.md "TLS": when TLS_PORT, TLS_CERT and TLS_KEY are
 * set, a second Tomcat connector beside the cleartext one.
 *
 * <p>Spring Boot configures one connector from {@code server.*} properties
 * and documents a second one as code: "Spring Boot does not support the
 * configuration of both an HTTP connector and an HTTPS connector in
 * application.properties. If you want to have both, you need to configure one
 * of them programmatically" (How-to Guides, Embedded Web Servers, "Enable
 * Multiple Connectors with Tomcat",
 * https://docs.spring.io/spring-boot/3.5/how-to/webserver.html#howto.webserver.enable-multiple-connectors-in-tomcat).
 * Boot recommends the properties for HTTPS; here the cleartext connector keeps
 * them instead, so that it stays exactly what it is without TLS, and the TLS
 * connector is the added one. It is set up the way Tomcat's HTTP connector
 * reference does it (SSL Support: an SSLHostConfig with PEM
 * certificateFile and certificateKeyFile; certificateVerification="required"
 * with a trust store of TLS_CLIENT_CA for client certificates; HTTP/2 as an
 * upgrade protocol, offered through ALPN; https://tomcat.apache.org/tomcat-10.1-doc/config/http.html),
 * which is what {@code server.ssl.*} and {@code server.http2.enabled} set on
 * Boot's own connector. It carries the two settings application.properties
 * gives the cleartext connector: the Server header and no cap on keep-alive
 * requests.
 */
@Component
public class TlsConnector implements WebServerFactoryCustomizer<TomcatServletWebServerFactory> {

    @Override
    public void customize(TomcatServletWebServerFactory factory) {
        String port = System.getenv("TLS_PORT");
        String cert = System.getenv("TLS_CERT");
        String key = System.getenv("TLS_KEY");
        if (blank(port) || blank(cert) || blank(key)) {
            return;
        }
        String host = System.getenv("HOST");
        Connector connector = new Connector(Http11NioProtocol.class.getName());
        connector.setPort(Integer.parseInt(port.trim()));
        connector.setProperty("address", blank(host) ? "127.0.0.1" : host.trim());
        connector.setScheme("https");
        connector.setSecure(true);
        connector.addUpgradeProtocol(new Http2Protocol());

        Http11NioProtocol protocol = (Http11NioProtocol) connector.getProtocolHandler();
        protocol.setSSLEnabled(true);
        protocol.setServer("java-spring");
        protocol.setMaxKeepAliveRequests(-1);

        SSLHostConfig ssl = new SSLHostConfig();
        ssl.setProtocols("TLSv1.2+TLSv1.3");
        SSLHostConfigCertificate certificate =
                new SSLHostConfigCertificate(ssl, SSLHostConfigCertificate.Type.UNDEFINED);
        certificate.setCertificateFile(cert);
        certificate.setCertificateKeyFile(key);
        ssl.addCertificate(certificate);
        String clientCa = System.getenv("TLS_CLIENT_CA");
        if (!blank(clientCa)) {
            // Tomcat reads a PEM caCertificateFile with OpenSSL only; with
            // JSSE the CA goes in as a trust store, made from the PEM file
            // by Boot's own PEM SSL bundle support (spring.ssl.bundle.pem).
            PemSslStoreDetails trust = PemSslStoreDetails.forCertificates("file:" + clientCa.trim());
            ssl.setTrustStore(new PemSslStoreBundle(null, trust).getTrustStore());
            ssl.setCertificateVerification("required");
        }
        protocol.addSslHostConfig(ssl);

        factory.addAdditionalTomcatConnectors(connector);
        System.err.println("java-spring: TLS on port " + port.trim());
    }

    private static boolean blank(String s) {
        return s == null || s.isBlank();
    }
}
