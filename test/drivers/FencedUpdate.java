/*
 * test/drivers/FencedUpdate.java: fence.fenced_update from pgJDBC, with
 * setLong, setInt and setString (which pgJDBC sends as varchar); no casts
 * in the SQL.
 *
 * Arguments: JDBC URL.  DRV_RESOURCE, DRV_TOKEN and DRV_STALE as in
 * fenced_python.py.  Exit 0 when the first write updated one row and the
 * second was refused with LF001.
 */
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;

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

	public static void main(String[] args) throws Exception
	{
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
