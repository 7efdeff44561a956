/*
 * test/drivers/FencedUpdate.java: fence.fenced_update from pgJDBC, with
 * setLong, setInt and setString (which pgJDBC sends as varchar); no casts
 * in the SQL.
 *
 * Arguments: JDBC URL.  DRV_RESOURCE, DRV_TOKEN and DRV_STALE as in
 * fenced_python.py.  Exit 0 when the first write updated one row and the
 * second was refused with LF001.
 *
 * "URL probe MODE", under "fence run": one guarded write as in
 * fenced_python.py, printing "write=ok" or "write=SQLSTATE".  pgJDBC reads
 * no PGOPTIONS: "options" passes it on as the connection property of that
 * name; "local" sets the token in the transaction.
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Properties;

public class FencedUpdate
{
	static final String SQL = "SELECT fence.fenced_update(?, ?, ?, ?, ?, ?)";
	static final String QUERY = "UPDATE drv_stock SET qty = qty - $1 WHERE sku = $2 AND id = $3";

	static long write(Connection conn, String resource, long token) throws SQLException
	{
		try (PreparedStatement st = conn.prepareStatement(SQL))
		{
			st.setString(1, resource);
			st.setLong(2, token);
			st.setString(3, QUERY);
			st.setInt(4, 1);
			st.setString(5, "widget");
			st.setInt(6, 7);
			try (ResultSet rs = st.executeQuery())
			{
				rs.next();
				return rs.getLong(1);
			}
		}
	}

	static String probe(String url, String mode) throws SQLException
	{
		Properties props = new Properties();

		if (mode.equals("options"))
			props.setProperty("options", System.getenv("PGOPTIONS"));
		try (Connection conn = DriverManager.getConnection(url, props))
		{
			conn.setAutoCommit(false);
			try
			{
				if (mode.equals("local"))
				{
					try (PreparedStatement st = conn.prepareStatement(
							"SELECT set_config('fence.resource', ?, true), set_config('fence.token', ?, true)"))
					{
						st.setString(1, System.getenv("FENCE_RESOURCE"));
						st.setString(2, System.getenv("FENCE_TOKEN"));
						st.executeQuery().close();
					}
				}
				try (PreparedStatement st = conn.prepareStatement(
						"UPDATE drv_guard SET n = n + 1, token_seen = current_setting('fence.token', true) WHERE driver = ?"))
				{
					st.setString(1, System.getenv("PROBE_DRIVER"));
					st.executeUpdate();
				}
				conn.commit();
				return "ok";
			}
			catch (SQLException e)
			{
				conn.rollback();
				return e.getSQLState();
			}
		}
	}

	public static void main(String[] args) throws Exception
	{
		if (args.length == 3 && args[1].equals("probe"))
		{
			System.out.println("write=" + probe(args[0], args[2]));
			return;
		}

		String resource = System.getenv("DRV_RESOURCE");
		long token = Long.parseLong(System.getenv("DRV_TOKEN"));
		long stale = Long.parseLong(System.getenv("DRV_STALE"));
		String sqlstate = null;

		try (Connection conn = DriverManager.getConnection(args[0]))
		{
			long rows = write(conn, resource, token);

			if (rows != 1)
			{
				System.err.println("accepted write updated " + rows + " rows, expected 1");
				System.exit(1);
			}
			try
			{
				write(conn, resource, stale);
			}
			catch (SQLException e)
			{
				sqlstate = e.getSQLState();
			}
		}
		if (!"LF001".equals(sqlstate))
		{
			System.err.println("stale write: SQLSTATE " + sqlstate + ", expected LF001");
			System.exit(1);
		}
		System.out.println("ok: 1 row with token " + token + ", LF001 with token " + stale);
	}
}
